/**
 * What a remote store learns from a failed request, reduced to SDK-neutral facts, and the rules
 * the Azure and S3 backends share to turn those facts into retries or typed errors. SDK errors
 * are never passed on as `cause`: they can carry request URLs with SAS signatures and
 * authorisation headers, so a redacted summary travels instead.
 */
import { StorageError } from '../errors/index.js'
import type { AttemptVerdict, RetriedCall } from './retry.js'

/** The SDK-neutral facts about one failed request. */
export interface RequestFailure {
  /** HTTP status of the response; undefined when no response arrived. */
  readonly status: number | undefined
  /**
   * The service's error code (`BlobNotFound`, `PreconditionFailed`), the errno of a transport
   * failure (`ECONNREFUSED`), or `TIMEOUT` for an abandoned attempt.
   */
  readonly code: string | undefined
  /** The service's message, first line only, with secrets removed. */
  readonly message: string
  /** The service's request id, for support cases. */
  readonly requestId: string | undefined
}

/** Transport failures that happen before any byte of the request reaches the service. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'EADDRNOTAVAIL',
])

/** Statuses worth another attempt. */
const TRANSIENT_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504])

/**
 * Statuses with which a service refuses a request without acting on it (timeout while reading
 * the request, throttling, overload). Other 5xx statuses may come after the write took effect.
 */
const REFUSED_STATUSES: ReadonlySet<number> = new Set([408, 429, 503])

/** Error codes of rejected credentials, whatever status carries them. */
const CREDENTIAL_CODES: ReadonlySet<string> = new Set([
  'AuthenticationFailed',
  'AuthorizationFailure',
  'InvalidAuthenticationInfo',
  'NoAuthenticationInformation',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'InvalidToken',
  'TokenRefreshRequired',
  'InvalidClientTokenId',
])

/**
 * The failure of an attempt abandoned for exceeding its timeout.
 *
 * @param timeoutMs - the attempt timeout
 * @returns the failure facts
 */
export function timeoutFailure(timeoutMs: number): RequestFailure {
  return Object.freeze({
    status: undefined,
    code: 'TIMEOUT',
    message: `no complete response within ${timeoutMs} ms`,
    requestId: undefined,
  })
}

/**
 * Whether a failure is transient (worth retrying), and if so whether the request may have taken
 * effect before it failed.
 *
 * @param failure - the failure facts
 * @returns `undefined` when the failure is not transient
 */
export function transience(failure: RequestFailure): { readonly mayHaveLanded: boolean } | undefined {
  if (failure.status === undefined) {
    return { mayHaveLanded: !(failure.code !== undefined && NOT_SENT_CODES.has(failure.code)) }
  }
  if (TRANSIENT_STATUSES.has(failure.status)) return { mayHaveLanded: !REFUSED_STATUSES.has(failure.status) }
  return undefined
}

/**
 * Whether the service rejected the credentials (or their permissions) rather than the request.
 *
 * @param failure - the failure facts
 * @returns true for 401, 403 and the credential error codes
 */
export function isCredentialFailure(failure: RequestFailure): boolean {
  return (
    failure.status === 401 ||
    failure.status === 403 ||
    (failure.code !== undefined && CREDENTIAL_CODES.has(failure.code))
  )
}

/**
 * The verdict every remote store reaches once its own specific cases (not found, already
 * exists, ...) are handled: rejected credentials and other permanent failures are thrown,
 * transient ones retried. A transient failure of a conditional put that may have landed is not
 * retried: it is thrown at once as an ambiguous {@link StorageError}, because a retry would
 * report "already exists" for a write that in fact succeeded.
 *
 * @param call - the call; `write: 'conditional'` marks a put with `ifNotExists`
 * @param failure - the failure facts
 * @param credentialHint - which settings hold the credentials, for the hint of a rejection
 * @returns the verdict
 */
export function commonVerdict(
  call: RetriedCall,
  failure: RequestFailure,
  credentialHint: string,
): AttemptVerdict {
  if (isCredentialFailure(failure)) {
    return {
      kind: 'throw',
      error: new StorageError(
        `Could not ${call.action} ${call.path}: ${call.service} rejected the credentials (${describeFailure(failure)}).`,
        { path: call.path, cause: sanitizedCause(call.service, failure), hint: credentialHint },
      ),
    }
  }
  const transient = transience(failure)
  if (transient === undefined) {
    return {
      kind: 'throw',
      error: new StorageError(`Could not ${call.action} ${call.path}: ${describeFailure(failure)}.`, {
        path: call.path,
        cause: sanitizedCause(call.service, failure),
      }),
    }
  }
  if (call.write === 'conditional' && transient.mayHaveLanded) {
    return {
      kind: 'throw',
      error: new StorageError(
        `The outcome of the put-if-absent of ${call.path} is unknown: the request may have reached ${call.service} before it failed (${describeFailure(failure)}), so the object may or may not have been written.`,
        {
          path: call.path,
          retryable: true,
          ambiguous: true,
          cause: sanitizedCause(call.service, failure),
          hint: 'Read the object to learn whether this write created it before writing it again.',
        },
      ),
    }
  }
  return { kind: 'retry', failure, mayHaveLanded: transient.mayHaveLanded }
}

/**
 * A short, secret-free description of a failure: `HTTP 503 ServerBusy: The server is busy.`
 * or `ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1`.
 *
 * @param failure - the failure facts
 * @returns the description
 */
export function describeFailure(failure: RequestFailure): string {
  const head =
    failure.status === undefined
      ? (failure.code ?? 'a transport error')
      : `HTTP ${failure.status}${failure.code === undefined ? '' : ` ${failure.code}`}`
  const message = failure.message.replace(/\.+$/, '')
  return message === '' || message === failure.code ? head : `${head}: ${message}`
}

/**
 * The `cause` attached to errors in place of an SDK error: the failure facts and nothing else.
 *
 * @param service - the service name
 * @param failure - the failure facts
 * @returns a frozen plain object
 */
export function sanitizedCause(service: string, failure: RequestFailure): Readonly<Record<string, unknown>> {
  return Object.freeze({ service, ...failure })
}

/**
 * Removes secrets from a text: every listed secret, and anything shaped like a signature or key
 * parameter (`sig=`, `Signature=`, `AccountKey=`, `SharedAccessSignature=`).
 *
 * @param text - the text, usually an SDK error message
 * @param secrets - literal secrets to remove (empty strings are ignored)
 * @returns the text with each secret replaced by `***`
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('***')
  return out.replace(
    /\b(sig|signature|x-amz-signature|x-amz-security-token|accountkey|sharedaccesssignature|credential)=([^&;,\s"']+)/gi,
    '$1=***',
  )
}

/**
 * The first line of an SDK message, redacted and trimmed to a sane length (services append
 * request ids and timestamps on further lines).
 *
 * @param message - the message
 * @param secrets - literal secrets to remove
 * @returns the cleaned line
 */
export function firstLine(message: unknown, secrets: readonly string[]): string {
  const text = typeof message === 'string' ? message : ''
  const line = redact(text.split('\n', 1)[0] ?? '', secrets).trim()
  return line.length > 300 ? `${line.slice(0, 300)}...` : line
}
