import { styleText } from 'node:util'

/** The streams and environment a CLI run writes to. Tests pass their own. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }
  readonly env: Readonly<Record<string, string | undefined>>
  /** Standard input, read when an input file is given as `-`. */
  readonly stdin?: NodeJS.ReadableStream | undefined
  /**
   * Aborted, with an `InterruptedError` as its reason, when the process gets SIGINT or SIGTERM.
   * A command that can stop cleanly (undo what it staged) listens to it; while nothing listens,
   * a signal ends the process at once.
   */
  readonly interrupt?: AbortSignal | undefined
}

/** Text styles the CLI uses. */
export type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan' | 'magenta'

/** Writes human text to one stream, styled only when that stream is a terminal that wants colour. */
export interface Painter {
  /** Whether styles are applied. */
  readonly color: boolean
  /**
   * Styles text when colour is on.
   *
   * @param style - the style
   * @param text - the text
   * @returns the text, with escape sequences around it when colour is on
   */
  paint(style: Style, text: string): string
}

/**
 * A painter for a stream: colour only on a TTY, and never when `NO_COLOR` is set (any value) or
 * `TERM` is `dumb`.
 *
 * @param stream - the stream text goes to
 * @param env - the environment
 * @returns the painter
 */
export function painterFor(stream: { isTTY?: boolean }, env: CliIo['env']): Painter {
  const color = stream.isTTY === true && env.NO_COLOR === undefined && env.TERM !== 'dumb'
  return Object.freeze({
    color,
    paint: (style: Style, text: string) => (color ? styleText(style, text, { validateStream: false }) : text),
  })
}

// Escape sequences are counted out of the visible width, so aligned columns stay aligned when
// cells are coloured.
const ANSI = /\u001b\[[0-9;]*m/g

/**
 * The number of terminal columns a string takes (escape sequences excluded).
 *
 * @param s - the text
 * @returns its visible width
 */
export function visibleWidth(s: string): number {
  return [...s.replace(ANSI, '')].length
}

/**
 * Pads text to a visible width.
 *
 * @param s - the text (may hold escape sequences)
 * @param width - the target width
 * @param align - where the text sits
 * @returns the padded text
 */
export function pad(s: string, width: number, align: 'left' | 'right' = 'left'): string {
  const fill = ' '.repeat(Math.max(0, width - visibleWidth(s)))
  return align === 'left' ? s + fill : fill + s
}

/** A progress indicator on stderr; it draws nothing unless stderr is a terminal. */
export interface Progress {
  /**
   * Moves the indicator.
   *
   * @param done - units done so far
   * @param note - optional text after the counts
   */
  update(done: number, note?: string): void
  /** Clears the line. Idempotent. */
  finish(): void
}

const BAR_WIDTH = 24
const REDRAW_MS = 80

/**
 * A progress bar (when the total is known) or a counter, redrawn in place on stderr.
 *
 * @param io - the CLI streams
 * @param label - what is progressing
 * @param total - total units, when known
 * @param unit - the unit's name, for the counter
 * @param enabled - false to draw nothing (for `--json`)
 * @returns the indicator
 */
export function createProgress(
  io: CliIo,
  label: string,
  total: number | undefined,
  unit: string,
  enabled = true,
): Progress {
  const stream = io.stderr
  if (!enabled || stream.isTTY !== true) return { update: () => {}, finish: () => {} }
  const painter = painterFor(stream, io.env)
  let last = 0
  let drawn = false
  return {
    update(done: number, note?: string) {
      const now = Date.now()
      if (now - last < REDRAW_MS && (total === undefined || done < total)) return
      last = now
      let text: string
      if (total !== undefined && total > 0) {
        const share = Math.min(1, done / total)
        const full = Math.round(share * BAR_WIDTH)
        const bar =
          painter.paint('cyan', '#'.repeat(full)) + painter.paint('dim', '-'.repeat(BAR_WIDTH - full))
        text = `${label} [${bar}] ${String(Math.floor(share * 100)).padStart(3)}% ${formatCount(done)}/${formatCount(total)} ${unit}`
      } else {
        text = `${label} ${formatCount(done)} ${unit}`
      }
      if (note) text += ` ${painter.paint('dim', note)}`
      stream.write(`\r\u001b[2K${text}`)
      drawn = true
    },
    finish() {
      if (drawn) stream.write('\r\u001b[2K')
      drawn = false
    },
  }
}

/**
 * A count with thousands separators (`1,234,567`).
 *
 * @param n - the count
 * @returns its text
 */
export function formatCount(n: number | bigint): string {
  return BigInt(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}

/**
 * A byte size in binary units (`1.5 MiB`).
 *
 * @param bytes - the size
 * @returns its text
 */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let v = bytes
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return i === 0 ? `${bytes} B` : `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`
}
