/**
 * The one table of the API's operations as integrators see them: `METHOD /path/{param}` → the
 * `operationId` a generated client names its method after, grouped under the tag (area) that
 * lists it. The document takes ids and tags from here, not from the route files, so that
 * renaming or moving a route file changes nothing an SDK depends on.
 * `test/http/openapi-operations.test.ts` fails when a documented route has no entry here or an
 * entry names no route: a new route comes with its line.
 */
export const TAGS = {
  Organizations: 'The caller\'s organization, its saved places (depots, branches, pickup points) and its contracts.',
  Shipments: 'Create, read, cancel and track shipments; labels, attachments and the audit history.',
  Quotes: 'Prices per service type before a shipment is created.',
  'Shipment statuses': 'The organization\'s shipment status catalog: names and colours of the standard codes.',
  Carriers: 'The organization\'s carriers in the carrier hub: credentials, service types, settings.',
  Users: 'Dispatchers and drivers of a carrier organization.',
  Vehicles: 'Vehicles and their capacity.',
  Blueprints: 'Reusable workflow templates: steps, requirements and actions.',
  Workflows: 'Instances of a blueprint, which create their tasks step by step.',
  Tasks: 'Executable units (pickup, delivery, …): their life cycle, proof and attachments.',
  Routes: 'A driver\'s tasks with a vehicle on a shift date: planning, ordering, publishing.',
  'Route progress': 'A route\'s progress now, as a stream, and read-only live links.',
  Webhooks: 'The organization\'s event subscriptions and their delivery log.',
  Admin: 'Platform administration: organizations, tokens, contracts, carrier certification (admin token).',
  'Carrier account': 'The carrier behind the API key (carrier API).',
  'Carrier shipments': 'Shipments the carrier carries: feed, detail, documents, tracking and statuses (carrier API).',
  'Carrier tariffs': 'Fixed tariffs and their zone rates (carrier API).',
  'Carrier notifications': 'The webhook notifications sent to the carrier and their redelivery (carrier API).',
  Audit: 'Signed tree heads and proofs of the verifiable event log (no credentials).',
} as const

export type Tag = keyof typeof TAGS
const isTag = (name: string): name is Tag => Object.hasOwn(TAGS, name)

const BY_TAG: Record<Tag, Record<string, string>> = {
  Organizations: {
    'GET /api/v1/organizations/my': 'getMyOrganization',
    'GET /api/v1/organizations/my/places': 'listPlaces',
    'POST /api/v1/organizations/my/places': 'createPlace',
    'GET /api/v1/organizations/my/contracts': 'listContracts',
    'GET /api/v1/organizations/my/settings': 'getOrganizationSettings',
    'PATCH /api/v1/organizations/my/settings': 'updateOrganizationSettings',
  },
  Shipments: {
    'POST /api/v1/shipments': 'createShipment',
    'GET /api/v1/shipments': 'listShipments',
    'GET /api/v1/shipments/{id}': 'getShipment',
    'GET /api/v1/shipments/{id}/events': 'listShipmentEvents',
    'POST /api/v1/shipments/{id}/cancel': 'cancelShipment',
    'POST /api/v1/shipments/{id}/ready': 'markShipmentReady',
    'GET /api/v1/shipments/{id}/tracking': 'getShipmentTracking',
    'POST /api/v1/shipments/tracking/bulk': 'getBulkTracking',
    'POST /api/v1/shipments/{id}/attachments': 'uploadShipmentAttachment',
    'GET /api/v1/shipments/{id}/attachments': 'listShipmentAttachments',
    'GET /api/v1/shipments/{id}/attachments/{attachment_id}': 'downloadShipmentAttachment',
    'GET /api/v1/shipments/{id}/label': 'getShipmentLabel',
  },
  Quotes: {
    'POST /api/v1/shipments/quotes': 'quoteShipment',
  },
  'Shipment statuses': {
    'GET /api/v1/shipment-statuses': 'listShipmentStatuses',
    'PATCH /api/v1/shipment-statuses/{code}': 'customizeShipmentStatus',
  },
  Carriers: {
    'POST /api/v1/carriers': 'createCarrier',
    'GET /api/v1/carriers': 'listCarriers',
    'GET /api/v1/carriers/{id}': 'getCarrier',
    'PATCH /api/v1/carriers/{id}': 'updateCarrier',
    'POST /api/v1/carriers/{id}/keys': 'rotateCarrierKeys',
    'POST /api/v1/carriers/{id}/service-types': 'addCarrierServiceType',
  },
  Users: {
    'POST /api/v1/users': 'createUser',
    'GET /api/v1/users': 'listUsers',
    'GET /api/v1/users/{id}': 'getUser',
    'PATCH /api/v1/users/{id}': 'updateUser',
    'POST /api/v1/users/{id}/deactivate': 'deactivateUser',
    'POST /api/v1/users/{id}/sign-in-links': 'createSignInLink',
    'DELETE /api/v1/users/{id}/sign-in-links/{link_id}': 'revokeSignInLink',
    'GET /api/v1/users/{id}/positions': 'listDriverPositions',
    'POST /api/v1/drivers/me/positions': 'reportPositions',
  },
  Vehicles: {
    'POST /api/v1/vehicles': 'createVehicle',
    'GET /api/v1/vehicles': 'listVehicles',
    'GET /api/v1/vehicles/{id}': 'getVehicle',
    'PATCH /api/v1/vehicles/{id}': 'updateVehicle',
  },
  Blueprints: {
    'POST /api/v1/blueprints': 'createBlueprint',
    'GET /api/v1/blueprints': 'listBlueprints',
    'GET /api/v1/blueprints/{id}': 'getBlueprint',
    'PUT /api/v1/blueprints/{id}': 'replaceBlueprint',
    'POST /api/v1/blueprints/{id}/publish': 'publishBlueprint',
  },
  Workflows: {
    'POST /api/v1/workflows': 'createWorkflow',
    'GET /api/v1/workflows': 'listWorkflows',
    'GET /api/v1/workflows/{id}': 'getWorkflow',
    'POST /api/v1/workflows/{id}/cancel': 'cancelWorkflow',
    'GET /api/v1/workflows/{id}/events': 'listWorkflowEvents',
  },
  Tasks: {
    'POST /api/v1/tasks': 'createTask',
    'GET /api/v1/tasks': 'listTasks',
    'GET /api/v1/tasks/{ulid}': 'getTask',
    'POST /api/v1/tasks/{ulid}/start': 'startTask',
    'POST /api/v1/tasks/{ulid}/arrive': 'arriveAtTask',
    'POST /api/v1/tasks/{ulid}/complete': 'completeTask',
    'POST /api/v1/tasks/{ulid}/fail': 'failTask',
    'POST /api/v1/tasks/{ulid}/cancel': 'cancelTask',
    'POST /api/v1/tasks/{ulid}/attachments': 'uploadTaskAttachment',
    'GET /api/v1/tasks/{ulid}/attachments': 'listTaskAttachments',
    'GET /api/v1/tasks/{ulid}/attachments/{attachment_id}': 'downloadTaskAttachment',
    'GET /api/v1/tasks/{ulid}/events': 'listTaskEvents',
  },
  Routes: {
    'POST /api/v1/routes': 'createRoute',
    'GET /api/v1/routes': 'listRoutes',
    'GET /api/v1/routes/{id}': 'getRoute',
    'PATCH /api/v1/routes/{id}': 'updateRoute',
    'POST /api/v1/routes/{id}/tasks': 'addRouteTasks',
    'PUT /api/v1/routes/{id}/tasks': 'reorderRouteTasks',
    'DELETE /api/v1/routes/{id}/tasks/{ulid}': 'removeRouteTask',
    'POST /api/v1/routes/{id}/publish': 'publishRoute',
    'POST /api/v1/routes/{id}/block': 'blockRoute',
    'POST /api/v1/routes/{id}/unblock': 'unblockRoute',
    'GET /api/v1/routes/{id}/events': 'listRouteEvents',
    'POST /api/v1/routes/{id}/optimize': 'optimizeRoute',
    'POST /api/v1/routes/plan': 'planRoutes',
  },
  'Route progress': {
    'GET /api/v1/routes/{id}/progress': 'getRouteProgress',
    'GET /api/v1/routes/{id}/progress/stream': 'streamRouteProgress',
    'POST /api/v1/routes/{id}/live-links': 'createRouteLiveLink',
  },
  Webhooks: {
    'POST /api/v1/webhooks': 'createWebhook',
    'GET /api/v1/webhooks': 'listWebhooks',
    'GET /api/v1/webhooks/{id}': 'getWebhook',
    'DELETE /api/v1/webhooks/{id}': 'deleteWebhook',
    'GET /api/v1/webhooks/{id}/deliveries': 'listWebhookDeliveries',
    'POST /api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver': 'redeliverWebhookDelivery',
  },
  Admin: {
    'POST /admin/v1/organizations': 'createOrganization',
    'POST /admin/v1/organizations/{org_id}/tokens': 'createOrganizationToken',
    'DELETE /admin/v1/tokens/{token_id}': 'revokeToken',
    'POST /admin/v1/organizations/{org_id}/suspend': 'suspendOrganization',
    'POST /admin/v1/organizations/{org_id}/unsuspend': 'unsuspendOrganization',
    'POST /admin/v1/contracts': 'createContract',
    'POST /admin/v1/carriers/{carrier_id}/certification': 'certifyCarrier',
  },
  'Carrier account': {
    'GET /carrier/v1/me': 'getCarrierAccount',
    'PATCH /carrier/v1/me': 'updateCarrierAccount',
  },
  'Carrier shipments': {
    'GET /carrier/v1/shipments': 'listCarrierShipments',
    'GET /carrier/v1/shipments/{shipment_id}': 'getCarrierShipment',
    'POST /carrier/v1/shipments/{shipment_id}/documents': 'uploadShipmentDocuments',
    'PUT /carrier/v1/shipments/{shipment_id}/tracking': 'setShipmentTracking',
    'POST /carrier/v1/shipments/{shipment_id}/status': 'reportShipmentStatus',
  },
  'Carrier tariffs': {
    'POST /carrier/v1/tariffs': 'createTariff',
    'GET /carrier/v1/tariffs': 'listTariffs',
    'GET /carrier/v1/tariffs/{tariff_id}': 'getTariff',
    'PUT /carrier/v1/tariffs/{tariff_id}/rates': 'publishTariffRates',
    'POST /carrier/v1/tariffs/{tariff_id}/activate': 'activateTariff',
  },
  'Carrier notifications': {
    'GET /carrier/v1/notifications': 'listCarrierNotifications',
    'POST /carrier/v1/notifications/{notification_id}/redeliver': 'redeliverCarrierNotification',
  },
  Audit: {
    'GET /audit/v1/public-key': 'getNotaryPublicKey',
    'GET /audit/v1/checkpoint': 'getCheckpoint',
    'GET /audit/v1/checkpoint/key': 'getCheckpointKey',
    'GET /audit/v1/tree-heads/latest': 'getLatestTreeHead',
    'GET /audit/v1/tree-heads/{size}': 'getTreeHead',
    'GET /audit/v1/consistency': 'getConsistencyProof',
  },
}

export interface OperationEntry { operationId: string; tag: Tag }

/** `METHOD /path/{param}` (the document's spelling) → its operation id and tag. */
export const OPERATIONS: ReadonlyMap<string, OperationEntry> = new Map(
  Object.keys(BY_TAG).filter(isTag)
    .flatMap((tag) => Object.entries(BY_TAG[tag]).map(([key, operationId]) => [key, { operationId, tag }] as const)),
)

export const operationKey = (method: string, path: string): string => `${method.toUpperCase()} ${path}`
