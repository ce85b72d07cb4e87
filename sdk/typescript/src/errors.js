// Errors mirror the API's error answer {error, code, details, request_id}:
// a QuireError carries them, with the HTTP status (0 when the server was
// not reached at all).

/** An error answer of the server, or a local render's error worded as the server's. */
export class QuireError extends Error {
  constructor({ status = 0, code = "", message = "", details = {}, requestId = "", cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "QuireError";
    this.status = status;
    this.code = code;
    this.details = details ?? {};
    this.requestId = requestId;
  }

  /** Whether the server could not answer: no connection, a timeout, or a 5xx. */
  get unreachable() {
    return this.status === 0 || this.status >= 500;
  }
}

/** Reads an error answer: {error, code, details, request_id}, each when present. */
export async function errorFrom(res) {
  const text = await res.text().catch(() => "");
  let body = {};
  try {
    body = JSON.parse(text) ?? {};
  } catch {
    // not JSON: the text is the message
  }
  let message = body.error || body.message || text.trim().slice(0, 200) || res.statusText || `HTTP ${res.status}`;
  return new QuireError({
    status: res.status,
    code: body.code ?? "",
    message,
    details: body.details ?? {},
    requestId: body.request_id || res.headers.get("x-request-id") || "",
  });
}
