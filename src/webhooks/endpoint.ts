/** The sealing context of a webhook's secret: kept by the notifications module, whose dispatcher opens it. */
export { secretContext } from '../notifications/webhook-endpoint.js'
