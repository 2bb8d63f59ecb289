import { ConcurrentModificationError, isDeltaError } from '../index.js'
import { UsageError } from './command.js'
import { InterruptedError } from './interrupt.js'
import { toJsonText } from './render.js'
import type { Painter } from './terminal.js'

/** Exit statuses of `delta-rlc`. */
export const EXIT = Object.freeze({ ok: 0, usage: 1, conflict: 2, error: 3 })

/** Codes of errors that mean "another writer won": the CLI exits with status 2 for them. */
const CONFLICT_CODES: ReadonlySet<string> = new Set([
  'DELTA_CONCURRENT_APPEND',
  'DELTA_CONCURRENT_DELETE_READ',
  'DELTA_CONCURRENT_DELETE_DELETE',
  'DELTA_CONCURRENT_TRANSACTION',
  'DELTA_METADATA_CHANGED',
  'DELTA_PROTOCOL_CHANGED',
])

/**
 * The exit status for an error: 1 for usage (a malformed argument, including a predicate that
 * does not parse), 2 for a concurrent-modification conflict, 128 plus
 * the signal number for an interrupt, 3 otherwise.
 *
 * @param err - anything thrown
 * @returns the status
 */
export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT.usage
  // Every predicate and expression the CLI parses is one of its arguments (--where, --set,
  // --on, ...): one that does not parse is a malformed argument.
  if (isDeltaError(err, 'DELTA_INVALID_PREDICATE')) return EXIT.usage
  if (err instanceof InterruptedError) return err.exitCode
  if (err instanceof ConcurrentModificationError) return EXIT.conflict
  if (isDeltaError(err) && (CONFLICT_CODES.has(err.code) || err.code.startsWith('DELTA_CONCURRENT_')))
    return EXIT.conflict
  return EXIT.error
}

/** The stable code of an error: a `DeltaError`'s own, else `DELTA_UNEXPECTED`. */
export function codeOf(err: unknown): string {
  return isDeltaError(err) ? err.code : 'DELTA_UNEXPECTED'
}

/**
 * The chain of causes under an error, outermost first (the error itself excluded).
 *
 * @param err - the error
 * @returns one entry per cause: its code when it has one, its name and message
 */
export function causeChain(err: unknown): Array<{ code?: string; name: string; message: string }> {
  const out: Array<{ code?: string; name: string; message: string }> = []
  const seen = new Set<unknown>()
  let cur: unknown = err instanceof Error ? err.cause : undefined
  while (cur !== undefined && cur !== null && !seen.has(cur) && out.length < 16) {
    seen.add(cur)
    if (cur instanceof Error) {
      out.push({
        ...(isDeltaError(cur) ? { code: cur.code } : {}),
        name: cur.name,
        message: cur.message,
      })
      cur = cur.cause
    } else {
      out.push(describeCause(cur))
      break
    }
  }
  return out
}

/**
 * A cause that is not an Error: a store's redacted request summary (`{ service, status, code,
 * message, ... }`) is named by its service and shown as its fields; any other object as JSON.
 */
function describeCause(cause: unknown): { name: string; message: string } {
  if (typeof cause !== 'object' || cause === null) return { name: typeof cause, message: String(cause) }
  const { service, ...rest } = cause as Record<string, unknown>
  const name = typeof service === 'string' ? service : (cause.constructor?.name ?? 'object')
  const fields = typeof service === 'string' ? rest : (cause as Record<string, unknown>)
  let text: string
  try {
    text = toJsonText(fields)
  } catch {
    text = String(cause)
  }
  return { name, message: text }
}

/**
 * Formats an error for a person: `error[CODE]: message`, `hint: ...`, and with `verbose` the
 * cause chain and stack.
 *
 * @param err - the error
 * @param painter - stderr styles
 * @param verbose - whether to add the cause chain
 * @returns the text to print on stderr
 */
export function formatError(err: unknown, painter: Painter, verbose: boolean): string {
  const code = codeOf(err)
  const message = err instanceof Error ? err.message : String(err)
  const lines = [`${painter.paint('red', painter.paint('bold', `error[${code}]`))}: ${message}`]
  const hint = isDeltaError(err) ? err.hint : undefined
  if (hint) lines.push(`${painter.paint('cyan', 'hint')}: ${hint}`)
  else if (!isDeltaError(err))
    lines.push(
      `${painter.paint('cyan', 'hint')}: this failure has no error code; rerun with --verbose and report it if it persists.`,
    )
  if (verbose) {
    for (const c of causeChain(err)) {
      lines.push(
        `${painter.paint('dim', 'caused by')}: ${c.code ? `[${c.code}] ` : ''}${c.name}: ${c.message}`,
      )
    }
    if (err instanceof Error && err.stack && !isDeltaError(err)) lines.push(painter.paint('dim', err.stack))
  }
  return lines.join('\n')
}

/**
 * Formats an error as the JSON object printed on stderr under `--json`.
 *
 * @param err - the error
 * @param verbose - whether to include the cause chain
 * @returns one line of JSON
 */
export function formatErrorJson(err: unknown, verbose: boolean): string {
  const fields: Record<string, unknown> = {}
  if (isDeltaError(err)) {
    for (const [k, v] of Object.entries(err)) {
      if (k === 'hint' || k === 'code' || k === 'name') continue
      if (v === undefined || typeof v === 'function') continue
      fields[k] = v
    }
  }
  return toJsonText({
    error: {
      code: codeOf(err),
      exitCode: exitCodeOf(err),
      message: err instanceof Error ? err.message : String(err),
      hint: isDeltaError(err) ? (err.hint ?? null) : null,
      ...(Object.keys(fields).length > 0 ? { details: fields } : {}),
      ...(verbose ? { causes: causeChain(err) } : {}),
    },
  })
}
