// The app's words in the organization's language (Spanish or English); before sign-in, the phone's.
const EN = {
  signInTitle: 'Sign in', signInHelp: 'Open the link your dispatcher sent you, or type its code.', codeLabel: 'Sign-in code',
  signInButton: 'Sign in', signingIn: 'Signing in…', signInFailed: 'This code is not valid: it may have been used, revoked or expired. Ask your dispatcher for a new one.',
  signInOffline: 'No connection: sign in when you are back online.', signOut: 'Sign out', signedOut: 'You were signed out. Ask your dispatcher for a new sign-in link.',
  online: 'Online', offline: 'Offline', sharing: 'Sharing location', notSharing: 'Location paused', noLocation: 'Location unavailable',
  synced: 'Updated {time}', syncing: 'Updating…', offlineCopy: 'Offline: showing the route as of {time}', waitingCount: '{n} waiting to send',
  noRoutes: 'No route for you today.', routeOf: 'Route of {date}', stopsDone: '{done} of {total} stops done',
  nextStop: 'Next stop', allDone: 'All stops done.', stops: 'Stops', window: 'Window {w}', eta: 'ETA {t}', noAddress: 'No address',
  navigate: 'Navigate', webMaps: 'Web map', call: 'Call {phone}', pickup: 'Pickup', delivery: 'Delivery',
  start: 'On my way', arrive: 'Arrived', complete: 'Complete', fail: 'Could not', cancel: 'Back', sendComplete: 'Complete stop', sendFail: 'Report failure',
  status_pending: 'Pending', status_started: 'On the way', status_arrived: 'Arrived', status_complete: 'Complete', status_failed: 'Failed', status_cancelled: 'Cancelled',
  route_draft: 'Draft', route_published: 'Published', route_started: 'Started', route_blocked: 'Blocked', route_finished: 'Finished',
  waiting: 'Waiting to send', signature: 'Signature', signHere: 'Sign in the box', clearSignature: 'Clear', signedBy: 'Name of who signs',
  photo: 'Photo', barcode: 'Package barcode', scan: 'Scan', scanFailed: 'No barcode found in the picture: type it.', notes: 'Notes', reason: 'Reason',
  required: 'required', needs: 'Still needed: {list}', waitsFor: 'Waits for stop {list} to be done first.', waitsForOther: 'Waits for another task to be done first.',
  closed: 'This stop is closed.', blocked: 'The route is blocked: {reason}',
  reason_no_answer: 'No answer', reason_bad_address: 'Wrong address', reason_rejected: 'Rejected', reason_damaged: 'Damaged', reason_closed: 'Closed', reason_other: 'Other',
  req_signature: 'signature and name', moreProof: 'More proof (optional)', req_photo: 'photo', req_barcode_scan: 'barcode', req_notes: 'notes',
  conflictsTitle: 'Not sent', dismiss: 'Dismiss', conflictRemoved: 'Stop {stop}: it was removed from your route meanwhile; “{action}” was not recorded.',
  conflictRefused: 'Stop {stop}: “{action}” was refused: {message}',
}
const ES = {
  signInTitle: 'Ingresar', signInHelp: 'Abrí el enlace que te mandó tu despachante, o escribí su código.', codeLabel: 'Código de ingreso',
  signInButton: 'Ingresar', signingIn: 'Ingresando…', signInFailed: 'Este código no es válido: puede haberse usado, revocado o vencido. Pedile uno nuevo a tu despachante.',
  signInOffline: 'Sin conexión: ingresá cuando vuelva la señal.', signOut: 'Cerrar sesión', signedOut: 'Se cerró tu sesión. Pedile a tu despachante un enlace nuevo.',
  online: 'En línea', offline: 'Sin conexión', sharing: 'Compartiendo ubicación', notSharing: 'Ubicación en pausa', noLocation: 'Ubicación no disponible',
  synced: 'Actualizado {time}', syncing: 'Actualizando…', offlineCopy: 'Sin conexión: ruta al {time}', waitingCount: '{n} por enviar',
  noRoutes: 'Hoy no tenés ruta.', routeOf: 'Ruta del {date}', stopsDone: '{done} de {total} paradas hechas',
  nextStop: 'Próxima parada', allDone: 'Todas las paradas hechas.', stops: 'Paradas', window: 'Horario {w}', eta: 'Llega {t}', noAddress: 'Sin dirección',
  navigate: 'Navegar', webMaps: 'Mapa web', call: 'Llamar {phone}', pickup: 'Retiro', delivery: 'Entrega',
  start: 'En camino', arrive: 'Llegué', complete: 'Entregado', fail: 'No se pudo', cancel: 'Volver', sendComplete: 'Confirmar entrega', sendFail: 'Informar problema',
  status_pending: 'Pendiente', status_started: 'En camino', status_arrived: 'En el lugar', status_complete: 'Hecha', status_failed: 'Fallida', status_cancelled: 'Cancelada',
  route_draft: 'Borrador', route_published: 'Publicada', route_started: 'En curso', route_blocked: 'Bloqueada', route_finished: 'Terminada',
  waiting: 'Por enviar', signature: 'Firma', signHere: 'Firmá en el recuadro', clearSignature: 'Borrar', signedBy: 'Nombre de quien firma',
  photo: 'Foto', barcode: 'Código del paquete', scan: 'Escanear', scanFailed: 'No se encontró un código en la foto: escribilo.', notes: 'Notas', reason: 'Motivo',
  required: 'obligatorio', needs: 'Falta: {list}', waitsFor: 'Primero hay que terminar la parada {list}.', waitsForOther: 'Primero hay que terminar otra tarea.',
  closed: 'Esta parada está cerrada.', blocked: 'La ruta está bloqueada: {reason}',
  reason_no_answer: 'No atendió', reason_bad_address: 'Dirección incorrecta', reason_rejected: 'Rechazado', reason_damaged: 'Dañado', reason_closed: 'Cerrado', reason_other: 'Otro',
  req_signature: 'firma y nombre', moreProof: 'Más pruebas (opcional)', req_photo: 'foto', req_barcode_scan: 'código', req_notes: 'notas',
  conflictsTitle: 'No enviado', dismiss: 'Descartar', conflictRemoved: 'Parada {stop}: la sacaron de tu ruta mientras tanto; «{action}» no quedó registrado.',
  conflictRefused: 'Parada {stop}: «{action}» fue rechazado: {message}',
}

let words = EN
let lang = 'en'

/** `es…` is Spanish; anything else English. */
export function setLanguage(locale) {
  lang = /^es\b/i.test(locale || '') ? 'es' : 'en'
  words = lang === 'es' ? ES : EN
  document.documentElement.lang = lang
}

export const language = () => lang

/** The word for `key`, with `{name}` filled from `vars`. */
export function t(key, vars) {
  const text = words[key] ?? EN[key] ?? key
  return vars ? text.replace(/\{(\w+)\}/g, (_, k) => String(vars[k] ?? '')) : text
}

/** Every element with `data-t` gets its word. */
export function translatePage() {
  for (const el of document.querySelectorAll('[data-t]')) el.textContent = t(el.getAttribute('data-t'))
}
