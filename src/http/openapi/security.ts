/**
 * One security scheme per kind of credential, so an integrator (and a generated client) sees which
 * token an operation takes. All three travel as `Authorization: Bearer …`; they differ in who
 * issues them and which API area accepts them, which is the area's path prefix (src/http/app.ts
 * authenticates each area by its own hook).
 */
export const SECURITY_SCHEMES = {
  organizationToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'The routes API (`/api/v1`): an organization\'s access token (`sk_…`, issued through the admin API) or a user\'s token '
      + '(a dispatcher\'s, or a driver\'s on the routes a driver may call). The token identifies the organization.',
  },
  carrierApiKey: {
    type: 'http',
    scheme: 'bearer',
    description: 'The carrier API (`/carrier/v1`): a carrier\'s API key, shown once when the carrier is created or its keys rotated.',
  },
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'The admin API (`/admin/v1`): the platform\'s admin token (`ADMIN_TOKEN`).',
  },
} as const

export type SecurityScheme = keyof typeof SECURITY_SCHEMES

/** Longest prefix first; `null`: the area takes no credential (the audit proofs are public). */
const AREAS: [prefix: string, scheme: SecurityScheme | null][] = [
  ['/api/v1/', 'organizationToken'],
  ['/carrier/v1/', 'carrierApiKey'],
  ['/admin/v1/', 'adminToken'],
  ['/audit/v1/', null],
]

/** The scheme an operation at this path takes; `undefined` for a path outside the four areas. */
export function securitySchemeOf(path: string): SecurityScheme | null | undefined {
  return AREAS.find(([prefix]) => path.startsWith(prefix))?.[1]
}
