/**
 * Reads a request body with a hard size cap. An oversized body is rejected as soon as the cap is
 * crossed (or up front from Content-Length) without buffering the rest; the remainder is read and
 * discarded so the 413 reaches the client instead of a connection reset, bounded by the server's
 * request timeout.
 */
import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

export class ClientGoneError extends Error {
  constructor() {
    super('client closed the connection before sending the whole body');
  }
}

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(new BodyTooLargeError(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        req.resume(); // keep draining without keeping anything
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onGone = () => {
      cleanup();
      reject(new ClientGoneError());
    };
    const cleanup = () => {
      req.off('data', onData).off('end', onEnd).off('aborted', onGone).off('error', onGone).off('close', onClose);
    };
    // 'close' before 'end' means the peer went away mid-body.
    const onClose = () => {
      if (!req.complete) onGone();
    };
    req.on('data', onData).on('end', onEnd).on('aborted', onGone).on('error', onGone).on('close', onClose);
  });
}
