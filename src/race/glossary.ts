/**
 * The plain words of the demo and race reports, in one place: what each reconciliation case and
 * each abort code means, the one-line headline of a file-level vs row-level comparison, and the
 * notes that explain numbers a reader would otherwise find odd. The terminal report, the HTML
 * report and `delta-rlc demo` all take their text from here, so the three never drift apart.
 */
import type { ReconciliationKind } from '../index.js'

/** The document the glossary points to, relative to the repository root. */
export const CONCEPTS_DOC = 'docs/concepts.md'

/** One glossary entry: an internal name, what it means in plain words, and where to read more. */
export interface GlossaryEntry {
  /** The name as reports, logs and errors print it (`case2-dv-union`, `DELTA_CONCURRENT_APPEND`). */
  readonly term: string
  /** What it means, in a sentence without internal names. */
  readonly words: string
  /** The anchor in {@link CONCEPTS_DOC} that explains it in full (`#case-2`). */
  readonly anchor: string
}

/** What each reconciliation case did, as a reader of a report needs it. */
export const RECONCILIATION_WORDS: Readonly<Record<ReconciliationKind, Omit<GlossaryEntry, 'term'>>> =
  Object.freeze({
    'case1-data-skipping': {
      words: 'another commit added files, but none holds a row this commit had to read',
      anchor: '#case-1',
    },
    'case1b-delete-read': {
      words: 'another commit removed rows from a file this commit read, none of them rows it needed',
      anchor: '#case-1',
    },
    'case2-dv-union': {
      words: 'two commits deleted different rows of the same file: both deletions are kept',
      anchor: '#case-2',
    },
    'case3-no-data-change': {
      words: 'a compaction only moved rows between files: no new data to check against',
      anchor: '#case-3',
    },
    'case4a-forward-remap': {
      words:
        "a compaction lost the race to a delete: the deleted rows are deleted in the compaction's new file",
      anchor: '#case-4',
    },
    'case4b-reverse-remap': {
      words: 'a delete lost the race to a compaction: its rows are deleted where the compaction moved them',
      anchor: '#case-4',
    },
    'case5a-zorder-forward': {
      words:
        'a Z-order OPTIMIZE lost the race to a delete: the deleted rows are deleted where the Z-order moved them',
      anchor: '#case-5',
    },
    'case5b-zorder-reverse': {
      words:
        'a delete, update or MERGE lost the race to a reordering compaction: its rows are found by row id where the compaction moved them, and deleted there (a change that only read moved files commits as it is)',
      anchor: '#case-5',
    },
    'case6-merge-rows': {
      words:
        'two MERGEs ran at once: none of the rows the other one inserted, updated or deleted is a row this one read',
      anchor: '#case-6',
    },
  })

const FILE_LEVEL = '#file-level-aborts'

/** What each abort code means, as a reader of a report needs it. */
export const ABORT_WORDS: Readonly<Record<string, Omit<GlossaryEntry, 'term'>>> = Object.freeze({
  DELTA_CONCURRENT_APPEND: {
    words: "Delta's name for: a file you read was rewritten (or one you would read added) by another commit",
    anchor: FILE_LEVEL,
  },
  DELTA_CONCURRENT_DELETE_READ: {
    words: 'a file this commit read was removed by another commit',
    anchor: FILE_LEVEL,
  },
  DELTA_CONCURRENT_DELETE_DELETE: {
    words: 'a file this commit removes was also removed by another commit',
    anchor: FILE_LEVEL,
  },
  DELTA_METADATA_CHANGED: {
    words: "another commit changed the table's schema, partitioning or properties",
    anchor: FILE_LEVEL,
  },
  DELTA_PROTOCOL_CHANGED: { words: "another commit changed the table's protocol", anchor: FILE_LEVEL },
  DELTA_CONCURRENT_TRANSACTION: {
    words: 'another commit wrote a marker for an application id this commit read',
    anchor: FILE_LEVEL,
  },
  DELTA_CONCURRENT_VACUUM: {
    words: 'a VACUUM that started after this commit read the table deleted (or may delete) a file it adds',
    anchor: FILE_LEVEL,
  },
  DELTA_MAX_COMMIT_RETRIES: {
    words: 'the commit lost the race for the next version more times than it may retry',
    anchor: '#commit-retries-and-idempotency',
  },
  DELTA_COMMIT_STATE_UNKNOWN: {
    words: 'the store failed so that the commit may or may not have landed',
    anchor: '#commit-retries-and-idempotency',
  },
})

/**
 * The glossary lines for the names that occurred, reconciliation cases first, each list sorted.
 * A code without plain words of its own is left out rather than explained wrongly.
 *
 * @param reconciliationKinds - the cases that reconciled at least one conflict
 * @param abortCodes - the error codes of at least one abort
 * @returns the entries, in print order
 */
export function glossaryFor(
  reconciliationKinds: Iterable<string>,
  abortCodes: Iterable<string>,
): GlossaryEntry[] {
  const out: GlossaryEntry[] = []
  for (const kind of [...new Set(reconciliationKinds)].sort()) {
    const e = (RECONCILIATION_WORDS as Readonly<Record<string, Omit<GlossaryEntry, 'term'>>>)[kind]
    if (e !== undefined) out.push({ term: kind, ...e })
  }
  for (const code of [...new Set(abortCodes)].sort()) {
    const e = ABORT_WORDS[code]
    if (e !== undefined) out.push({ term: code, ...e })
  }
  return out
}

/** What a comparison needs of one run. */
export interface RunFigures {
  /** Attempts that reached an outcome. */
  readonly attempts: number
  readonly commits: number
  readonly aborts: number
  readonly reconciliations: number
  /** Median commit latency, ms; leave out where latency means nothing (the quick demo). */
  readonly p50Ms?: number | undefined
}

/**
 * The one-line headline of a comparison, measured numbers only:
 * `file-level: 110 of 249 attempts aborted | row-level: 0 of 230 aborted, 576 conflicts reconciled`.
 *
 * @param fileLevel - the run with file-level conflict checking
 * @param rowLevel - the run with row-level reconciliation
 * @param noun - what an attempt is (`attempts`, `deletes`)
 * @returns the headline
 */
export function comparisonHeadline(fileLevel: RunFigures, rowLevel: RunFigures, noun = 'attempts'): string {
  return `file-level: ${fileLevel.aborts} of ${fileLevel.attempts} ${noun} aborted | row-level: ${rowLevel.aborts} of ${rowLevel.attempts} aborted, ${conflicts(rowLevel.reconciliations)} reconciled`
}

/**
 * The headline of a single run.
 *
 * @param label - `file-level`, `row-level` or a partial label
 * @param run - its figures
 * @returns the headline
 */
export function runHeadline(label: string, run: RunFigures): string {
  return `${label}: ${run.aborts} of ${run.attempts} attempts aborted, ${run.commits} committed, ${conflicts(run.reconciliations)} reconciled`
}

/**
 * One line each for the numbers of a row-level run that look wrong at first sight, and only when
 * they show: more reconciliations than commits, and (against a file-level run) a higher median
 * latency.
 *
 * @param rowLevel - the row-level run
 * @param fileLevel - the file-level run of the same workload, if any
 * @returns the notes, possibly none
 */
export function comparisonNotes(rowLevel: RunFigures, fileLevel?: RunFigures): string[] {
  const notes: string[] = []
  if (rowLevel.reconciliations > rowLevel.commits) {
    notes.push(
      `Reconciliations (${rowLevel.reconciliations}) outnumber commits (${rowLevel.commits}): a commit that lost the race to several other commits reconciles once against each of them.`,
    )
  }
  const a = fileLevel?.p50Ms
  const b = rowLevel.p50Ms
  if (a !== undefined && b !== undefined && Math.round(b) > Math.round(a)) {
    notes.push(
      `Row-level median commit latency is higher (${b.toFixed(0)} ms vs ${a.toFixed(0)} ms): a commit that loses the race does the reconciliation work and lands, where file-level aborts it and the abort counts in no latency.`,
    )
  }
  return notes
}

/** One paragraph on file-level vs row-level conflict checking, for readers new to both. */
export const LEVELS_EXPLAINED =
  'Delta writers commit optimistically: each reads the table, does its work, and tries to write the next version of the log. When another writer got there first, the loser checks what the winners changed. File-level checking (open-source Delta) aborts the loser whenever a winner added or removed a file the loser read or removed, even when the two touched different rows of it. Row-level checking (delta-rlc, with deletion vectors) looks at which rows changed and lets the loser commit when it proves the result equals running the two one after the other; on any doubt it aborts exactly as file-level does.'

/**
 * Wraps text at spaces to lines of at most `width` columns; the first line keeps the text's
 * leading spaces, continuation lines start with `indent`. A word longer than a line is left
 * whole on its own line. Terminal colour codes take no columns.
 *
 * @param text - one paragraph
 * @param width - the widest line, in columns
 * @param indent - the prefix of every line after the first
 * @returns the lines
 */
export function wrapText(text: string, width: number, indent = ''): string[] {
  const lines: string[] = []
  const lead = /^ */.exec(text)?.[0] ?? ''
  let line = ''
  for (const word of text.slice(lead.length).split(' ')) {
    if (line === '') line = lines.length === 0 ? `${lead}${word}` : `${indent}${word}`
    else if (visibleWidth(line) + 1 + visibleWidth(word) <= width) line += ` ${word}`
    else {
      lines.push(line)
      line = `${indent}${word}`
    }
  }
  if (line !== '') lines.push(line)
  return lines
}

/**
 * The glossary as terminal lines of at most `width` columns: a heading naming
 * {@link CONCEPTS_DOC}, then each name, its plain words and its anchor.
 *
 * @param entries - from {@link glossaryFor}
 * @param width - the widest line, in columns
 * @returns the lines, none when there is nothing to explain
 */
export function glossaryLines(entries: readonly GlossaryEntry[], width: number): string[] {
  if (entries.length === 0) return []
  let termWidth = 0
  for (const e of entries) termWidth = Math.max(termWidth, e.term.length)
  const out = [`What the names mean (each in full in ${CONCEPTS_DOC}, at the anchor in brackets):`]
  for (const e of entries) {
    const lead = `  ${e.term.padEnd(termWidth)}  `
    const pad = ' '.repeat(lead.length)
    for (const [i, l] of wrapText(`${e.words} [${e.anchor}]`, width - lead.length).entries())
      out.push(`${i === 0 ? lead : pad}${l}`)
  }
  return out
}

const COLOUR_CODE = /\u001b\[[0-9;]*m/g

function visibleWidth(text: string): number {
  return text.replace(COLOUR_CODE, '').length
}

function conflicts(n: number): string {
  return n === 1 ? '1 conflict' : `${n} conflicts`
}
