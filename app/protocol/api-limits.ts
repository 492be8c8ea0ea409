/**
 * The largest message the WorkbenchApi carries, in bytes of its JSON text, on every transport (the
 * serve host's WebSocket and the Electron IPC channel). It fits real requests with room to spare: a
 * start-run with a 1 MB prompt is 1 MB, a run record of thousands of steps a few MB. Beyond it the
 * serve host closes the socket with code 1009 (Message Too Big) and the client says so.
 */
export const MAX_API_MESSAGE_BYTES = 32 * 1024 * 1024;

/** WebSocket close code 1009 (RFC 6455 §7.4.1): the message was too big to process. */
export const CLOSE_MESSAGE_TOO_BIG = 1009;
