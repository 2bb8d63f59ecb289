import { DeltaError } from './delta-error.js'

/** The object does not exist. */
export class FileNotFoundError extends DeltaError {
  readonly code = 'DELTA_FILE_NOT_FOUND'
  readonly path: string
  constructor(path: string, options?: { cause?: unknown; hint?: string }) {
    super(`File not found: ${path}`, options)
    this.path = path
  }
}

/**
 * A put with `ifNotExists` found the object already there. On a log file this means another
 * writer committed that version first.
 */
export class FileAlreadyExistsError extends DeltaError {
  readonly code = 'DELTA_FILE_ALREADY_EXISTS'
  readonly path: string
  constructor(path: string, options?: { cause?: unknown }) {
    super(`File already exists: ${path}`, options)
    this.path = path
  }
}

/** A storage backend failed for a reason other than absence or presence of the object. */
export class StorageError extends DeltaError {
  readonly code = 'DELTA_STORAGE_ERROR'
  /** The path involved, when one is. */
  readonly path: string | undefined
  /** Whether the same call may succeed if repeated (timeouts, throttling, connection resets). */
  readonly retryable: boolean
  /**
   * Whether a write may have taken effect despite the error (a put whose response was lost).
   * The commit loop must then look at the log before trying again.
   */
  readonly ambiguous: boolean
  constructor(
    message: string,
    options?: { path?: string; retryable?: boolean; ambiguous?: boolean; cause?: unknown; hint?: string },
  ) {
    super(message, options)
    this.path = options?.path
    this.retryable = options?.retryable ?? false
    this.ambiguous = options?.ambiguous ?? false
  }
}

/** Which limit of the process or the machine a {@link ResourceExhaustedError} hit. */
export type ExhaustedResource = 'file-descriptors'

/**
 * The process or the machine ran out of a resource (EMFILE, ENFILE: no file descriptor left).
 * Never retried: repeating the call fails the same way until something is released. Usually
 * something in the process holds files open, such as scans iterated part-way and never finished
 * (break out of a `for await` loop, or call `table.close()`), or the descriptor limit is low.
 */
export class ResourceExhaustedError extends DeltaError {
  readonly code = 'DELTA_RESOURCE_EXHAUSTED'
  readonly resource: ExhaustedResource
  /** The system's error code (`EMFILE`, `ENFILE`), when there is one. */
  readonly errno: string | undefined
  constructor(
    resource: ExhaustedResource,
    message: string,
    options?: { errno?: string; cause?: unknown; hint?: string },
  ) {
    super(message, options)
    this.resource = resource
    this.errno = options?.errno
  }
}
