import { DeltaError } from './delta-error.js'
import { redactLocation } from './redact-location.js'

/** No Delta table (no `_delta_log` with a commit or checkpoint) at the location. */
export class TableNotFoundError extends DeltaError {
  readonly code = 'DELTA_TABLE_NOT_FOUND'
  /** The location, as {@link redactLocation} shows it. */
  readonly location: string
  constructor(location: string, options?: { cause?: unknown }) {
    super(`No Delta table at ${redactLocation(location)}: _delta_log has no commit or checkpoint`, {
      ...options,
      hint: 'Check the location, or create the table first (DeltaTable.create / delta-rlc create).',
    })
    this.location = redactLocation(location)
  }
}

/**
 * A method of a table (or of a scan, transaction or engine it handed out) was called after
 * `close()`, or the call was still running when the table was closed.
 */
export class TableClosedError extends DeltaError {
  readonly code = 'DELTA_TABLE_CLOSED'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, {
      ...options,
      hint: 'Open the table again (DeltaTable.open), and close it only once every call on it has finished.',
    })
  }
}

/** `create` found a table already there and `ifExists` was `'error'`. */
export class TableAlreadyExistsError extends DeltaError {
  readonly code = 'DELTA_TABLE_ALREADY_EXISTS'
  /** The location, as {@link redactLocation} shows it. */
  readonly location: string
  constructor(location: string) {
    super(`A Delta table already exists at ${redactLocation(location)}`, {
      hint: "Open it with DeltaTable.open, or pass ifExists: 'ignore'.",
    })
    this.location = redactLocation(location)
  }
}

/** Why a table's log cannot be turned into a snapshot. */
export type InvalidTableReason =
  | 'missing-protocol'
  | 'missing-metadata'
  | 'missing-schema'
  | 'versions-not-contiguous'
  | 'missing-version'
  | 'invalid-checkpoint'
  | 'malformed-commit'
  | 'malformed-action'
  | 'invalid-path'

/**
 * The log is unusable: a commit that is not valid JSON, an action that breaks the protocol,
 * missing versions, a broken checkpoint, a file path escaping the table root.
 * Nothing is repaired silently; the table is refused.
 */
export class InvalidTableError extends DeltaError {
  readonly code = 'DELTA_INVALID_TABLE'
  readonly reason: InvalidTableReason
  /** The log or data file at fault, when known. */
  readonly path: string | undefined
  /** The table version at fault, when known. */
  readonly version: bigint | undefined
  constructor(
    reason: InvalidTableReason,
    message: string,
    options?: { path?: string; version?: bigint; cause?: unknown; hint?: string },
  ) {
    super(message, options)
    this.reason = reason
    this.path = options?.path
    this.version = options?.version
  }
}

/** The table requires a reader or writer protocol version this library does not implement. */
export class UnsupportedProtocolVersionError extends DeltaError {
  readonly code = 'DELTA_UNSUPPORTED_PROTOCOL_VERSION'
  readonly side: 'reader' | 'writer'
  readonly requiredVersion: number
  readonly supportedVersion: number
  constructor(side: 'reader' | 'writer', requiredVersion: number, supportedVersion: number) {
    super(
      `Unsupported Delta protocol ${side} version ${requiredVersion}: delta-rlc supports ${side} versions up to ${supportedVersion}`,
      { hint: `Use a newer delta-rlc, or an engine that supports ${side} version ${requiredVersion}.` },
    )
    this.side = side
    this.requiredVersion = requiredVersion
    this.supportedVersion = supportedVersion
  }
}

/** The table uses a reader or writer table feature this library does not implement. */
export class UnsupportedTableFeatureError extends DeltaError {
  readonly code = 'DELTA_UNSUPPORTED_TABLE_FEATURE'
  readonly side: 'reader' | 'writer'
  readonly features: readonly string[]
  /**
   * @param side - whose feature it is
   * @param features - the features that block
   * @param detail - why, when only part of the feature is missing (e.g. one operation), and what
   *   to do instead
   */
  constructor(
    side: 'reader' | 'writer',
    features: readonly string[],
    detail?: { readonly reason: string; readonly hint: string },
  ) {
    super(
      `Unsupported Delta ${side} table feature(s): ${features.join(', ')}${detail === undefined ? '' : `: ${detail.reason}`}`,
      {
        hint:
          detail?.hint ??
          (side === 'reader'
            ? 'This table cannot be read safely by delta-rlc.'
            : 'This table can be read, but delta-rlc refuses to write to it.'),
      },
    )
    this.side = side
    this.features = Object.freeze([...features])
  }
}

/** Time travel asked for a version or timestamp that the log cannot serve. */
export class VersionNotFoundError extends DeltaError {
  readonly code = 'DELTA_VERSION_NOT_FOUND'
  readonly requested: string
  /** Earliest and latest versions that can be reconstructed, when known. */
  readonly earliest: bigint | undefined
  readonly latest: bigint | undefined
  /**
   * @param requested - what was asked for, e.g. `version 3`
   * @param earliest - the earliest version the log can rebuild, when known
   * @param latest - the latest version, when known
   * @param options - `beforeEarliest` when the request lies before `earliest`: with `earliest`
   *   above 0 the older commits were cleaned up, and the hint says so
   */
  constructor(
    requested: string,
    earliest?: bigint,
    latest?: bigint,
    options?: { cause?: unknown; beforeEarliest?: boolean },
  ) {
    const range =
      earliest !== undefined && latest !== undefined ? ` (available: versions ${earliest}..${latest})` : ''
    const cleanedUp = options?.beforeEarliest === true && earliest !== undefined && earliest > 0n
    super(`Cannot time travel to ${requested}${range}`, {
      cause: options?.cause,
      hint: cleanedUp
        ? `Log cleanup removed the commits before version ${earliest}, the oldest readable version: time travel to it or later. To keep more history, raise delta.logRetentionDuration (default 30 days); commits older than it are removed after each checkpoint.`
        : 'Pick a version or timestamp inside the available range; see `delta-rlc history`.',
    })
    this.requested = requested
    this.earliest = earliest
    this.latest = latest
  }
}

/** A deletion vector failed validation (magic, checksum, size, cardinality, location). */
export class InvalidDeletionVectorError extends DeltaError {
  readonly code = 'DELTA_INVALID_DELETION_VECTOR'
  /** The DV file (or `inline`) at fault. */
  readonly path: string | undefined
  constructor(message: string, options?: { path?: string; cause?: unknown; hint?: string }) {
    super(options?.path ? `${message} (deletion vector ${options.path})` : message, options)
    this.path = options?.path
  }
}

/** Characters of predicate text shown on each side of an error position. */
const POINTER_CONTEXT = 60

/**
 * The text under a caret at `position`; a long text (a generated 100,000-term predicate) is cut
 * to the part around the position, so that the message stays readable.
 */
function predicatePointer(text: string, position: number | undefined): string {
  if (position === undefined) return ''
  const at = Math.max(0, Math.min(position, text.length))
  const from = Math.max(0, at - POINTER_CONTEXT)
  const to = Math.min(text.length, at + POINTER_CONTEXT)
  const head = from > 0 ? '...' : ''
  const tail = to < text.length ? '...' : ''
  const line = `${head}${text.slice(from, to)}${tail}`.replace(/[\r\n\t]/g, ' ')
  return `\n  ${line}\n  ${' '.repeat(head.length + at - from)}^`
}

/** A predicate or SQL expression could not be parsed or typed. */
export class InvalidPredicateError extends DeltaError {
  readonly code = 'DELTA_INVALID_PREDICATE'
  /** The text given. */
  readonly text: string
  /** Zero-based character offset of the bad token, when known. */
  readonly position: number | undefined
  constructor(
    message: string,
    text: string,
    position?: number,
    options?: { cause?: unknown; hint?: string },
  ) {
    super(`${message}${predicatePointer(text, position)}`, options)
    this.text = text
    this.position = position
  }
}
