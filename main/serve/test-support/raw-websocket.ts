import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/** One WebSocket frame, written by hand so that a test can break every rule of RFC 6455. */
export interface RawFrame {
  readonly opcode: number;
  readonly payload?: Buffer;
  /** default true: clients must mask (§5.3); false sends an unmasked frame */
  readonly masked?: boolean;
  readonly fin?: boolean;
  /** a payload length to claim in the header instead of the real one */
  readonly claimedLength?: number;
  /** RSV bits (§5.2), normally 0 */
  readonly rsv?: number;
}

export function encodeFrame(frame: RawFrame): Buffer {
  const payload = frame.payload ?? Buffer.alloc(0);
  const length = frame.claimedLength ?? payload.length;
  const masked = frame.masked ?? true;
  const head: number[] = [((frame.fin ?? true) ? 0x80 : 0) | ((frame.rsv ?? 0) << 4) | (frame.opcode & 0x0f)];
  const maskBit = masked ? 0x80 : 0;
  let extended = Buffer.alloc(0);
  if (length < 126) head.push(maskBit | length);
  else if (length < 65536) {
    head.push(maskBit | 126);
    extended = Buffer.alloc(2);
    extended.writeUInt16BE(length);
  } else {
    head.push(maskBit | 127);
    extended = Buffer.alloc(8);
    extended.writeBigUInt64BE(BigInt(length));
  }
  if (!masked) return Buffer.concat([Buffer.from(head), extended, payload]);
  const mask = randomBytes(4);
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i]! ^= mask[i % 4]!;
  return Buffer.concat([Buffer.from(head), extended, mask, body]);
}

export interface RawConnection {
  readonly socket: Socket;
  send(frame: RawFrame | Buffer): void;
  /** Resolves with the close code the server sent (null when the socket ended without a close frame). */
  readonly closed: Promise<number | null>;
  /** the text frames received so far */
  readonly texts: string[];
}

/** Opens /api with the token and completes the upgrade, then hands over the raw socket. */
export function openRawWebSocket(port: number, token: string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buffered = Buffer.alloc(0);
    let upgraded = false;
    let closeCode: number | null = null;
    const texts: string[] = [];
    let settleClosed!: (code: number | null) => void;
    const closed = new Promise<number | null>((done) => void (settleClosed = done));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (!upgraded) reject(new Error('the upgrade was refused'));
      settleClosed(closeCode);
    });
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!upgraded) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = buffered.subarray(0, end).toString('latin1');
        buffered = buffered.subarray(end + 4);
        if (!head.startsWith('HTTP/1.1 101')) {
          reject(new Error(head.split('\r\n')[0]));
          return;
        }
        upgraded = true;
        resolve({ socket, send: (frame) => void socket.write(Buffer.isBuffer(frame) ? frame : encodeFrame(frame)), closed, texts });
      }
      // Server frames are unmasked; read whole frames as they complete.
      for (;;) {
        if (buffered.length < 2) return;
        let length = buffered[1]! & 0x7f;
        let offset = 2;
        if (length === 126) {
          if (buffered.length < 4) return;
          length = buffered.readUInt16BE(2);
          offset = 4;
        } else if (length === 127) {
          if (buffered.length < 10) return;
          length = Number(buffered.readBigUInt64BE(2));
          offset = 10;
        }
        if (buffered.length < offset + length) return;
        const opcode = buffered[0]! & 0x0f;
        const payload = buffered.subarray(offset, offset + length);
        if (opcode === 0x1) texts.push(payload.toString('utf8'));
        if (opcode === 0x8) closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : null;
        buffered = buffered.subarray(offset + length);
      }
    });
    socket.write(
      `GET /api?token=${token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
      `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n\r\n`,
    );
  });
}
