// Route planning: a VRPTW solver with VROOM's input/output shape (no I/O; DESIGN §3.9).
export type * from './model.js'
export { solve } from './solve.js'
export { euclideanMatrix, haversineMatrix, haversineMeters, type LatLng, type Point } from './matrix.js'
export { parseSolomon, solomonAnswer, solomonProblem, type SolomonAnswer, type SolomonInstance } from './solomon.js'
export { planTasks, type Plan, type PlannedRoute, type PlannedStop, type PlanningInput, type PlanningPair, type PlanningTask, type PlanningVehicle } from './plan-tasks.js'
