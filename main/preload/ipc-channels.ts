/** The only two IPC channels between the window and main: requests (invoke) and events (send). */
export const API_REQUEST_CHANNEL = 'kvscope:api';
export const API_EVENT_CHANNEL = 'kvscope:event';
