import {
  type AddFile,
  clusteringOf,
  generatedColumnsOf,
  identityColumnsOf,
  type Snapshot,
  type StructField,
  type StructType,
} from '../../index.js'
import { type Command, TIME_TRAVEL_OPTIONS, timeTravelOptions } from '../command.js'
import { renderTable } from '../render.js'
import { formatBytes, formatCount, type Painter, pad } from '../terminal.js'

type DataType = StructField['type']

/**
 * A clustered table's clustering columns by name (a column the schema does not name at the top
 * level shows as its recorded path, dotted), or an empty list for an unclustered table.
 */
export function clusteringColumnsOf(snap: Snapshot): string[] {
  const clustering = clusteringOf(snap)
  if (clustering === undefined) return []
  const columns = clustering.columns
  return 'unresolved' in columns ? clustering.physicalColumns.map((p) => p.join('.')) : [...columns]
}

/** `delta-rlc describe`: everything about a table at one version. */
export const describeCommand: Command = {
  name: 'describe',
  summary: 'Show schema, protocol and features, properties, partitioning, files, sizes and DV share.',
  usage: '<table> [--version N | --timestamp TIME] [--files]',
  options: {
    ...TIME_TRAVEL_OPTIONS,
    files: { type: 'boolean', help: 'also list every live data file' },
  },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const table = await ctx.openTable(loc, {})
    try {
      const snap = await table.snapshot(timeTravelOptions(values, 'describe'))
      const files = snap.activeFiles()
      const stats = fileStats(files)
      let liveRows = stats.liveRows
      if (liveRows === undefined) liveRows = await table.scan({ version: snap.version }).count()
      const deletedShare =
        stats.physicalRows !== undefined && stats.physicalRows > 0
          ? stats.deletedRows / stats.physicalRows
          : 0
      const protocol = snap.protocol
      const clustering = clusteringOf(snap)
      const summary = {
        table: loc,
        version: snap.version,
        timestamp: new Date(snap.timestamp).toISOString(),
        name: snap.metadata.name ?? null,
        description: snap.metadata.description ?? null,
        id: snap.metadata.id,
        schema: snap.schema,
        partitionColumns: snap.partitionColumns,
        clusteringColumns: clustering === undefined ? null : clusteringColumnsOf(snap),
        protocol: {
          minReaderVersion: protocol.minReaderVersion,
          minWriterVersion: protocol.minWriterVersion,
          readerFeatures: protocol.readerFeatures ?? [],
          writerFeatures: protocol.writerFeatures ?? [],
        },
        properties: snap.properties,
        files: files.length,
        sizeBytes: stats.bytes,
        rows: liveRows,
        physicalRows: stats.physicalRows ?? null,
        rowsDeletedByDeletionVectors: stats.deletedRows,
        deletedRowShare: deletedShare,
        filesWithDeletionVectors: stats.filesWithDv,
        ...(values.files === true ? { fileList: files.map(fileJson) } : {}),
      }
      if (ctx.json) {
        ctx.printJson(summary)
        return
      }
      const p = ctx.out
      const section = (title: string) => {
        ctx.print('')
        ctx.print(p.paint('bold', title))
      }
      const kv = (pairs: Array<[string, string]>) => {
        let w = 0
        for (const [k] of pairs) w = Math.max(w, k.length)
        for (const [k, v] of pairs) ctx.print(`  ${p.paint('dim', pad(k, w))}  ${v}`)
      }
      ctx.print(`${p.paint('bold', 'table')} ${loc}`)
      kv([
        ['version', String(snap.version)],
        ['committed', summary.timestamp],
        ['id', snap.metadata.id],
        ...(snap.metadata.name ? [['name', snap.metadata.name] as [string, string]] : []),
      ])
      section('schema')
      for (const line of schemaLines(snap.schema, p)) ctx.print(`  ${line}`)
      section('partitioning')
      ctx.print(
        `  ${snap.partitionColumns.length > 0 ? snap.partitionColumns.join(', ') : p.paint('dim', '(not partitioned)')}`,
      )
      if (clustering !== undefined) {
        const columns = clusteringColumnsOf(snap)
        ctx.print(
          `  ${p.paint('dim', `clustered by (${clustering.feature})`)} ${columns.length > 0 ? columns.join(', ') : p.paint('dim', '(no clustering columns)')}`,
        )
      }
      section('protocol')
      kv([
        ['reader version', String(protocol.minReaderVersion)],
        ['writer version', String(protocol.minWriterVersion)],
        ['reader features', (protocol.readerFeatures ?? []).join(', ') || p.paint('dim', '-')],
        ['writer features', (protocol.writerFeatures ?? []).join(', ') || p.paint('dim', '-')],
      ])
      section('properties')
      const props = Object.entries(snap.properties).sort(([a], [b]) => a.localeCompare(b))
      if (props.length === 0) ctx.print(`  ${p.paint('dim', '(none)')}`)
      else kv(props)
      section('data')
      kv([
        ['files', formatCount(files.length)],
        ['size', `${formatBytes(stats.bytes)} (${formatCount(stats.bytes)} bytes)`],
        ['live rows', formatCount(liveRows)],
        ...(stats.physicalRows === undefined
          ? []
          : ([
              ['physical rows', formatCount(stats.physicalRows)],
              [
                'deleted by DVs',
                `${formatCount(stats.deletedRows)} (${(deletedShare * 100).toFixed(2)}%) in ${formatCount(stats.filesWithDv)} file${stats.filesWithDv === 1 ? '' : 's'}`,
              ],
            ] as Array<[string, string]>)),
      ])
      if (values.files === true && files.length > 0) {
        section('files')
        const rows = files.map((f) => {
          const j = fileJson(f)
          return { path: j.path, size: j.size, rows: j.rows, deleted: j.deletedRows }
        })
        for (const line of renderTable(['path', 'size', 'rows', 'deleted'], rows, p).split('\n'))
          ctx.print(`  ${line}`)
      }
    } finally {
      await table.close()
    }
  },
}

interface FileStats {
  bytes: number
  /** Rows in the files (before DVs), when every file has a row count. */
  physicalRows: number | undefined
  liveRows: number | undefined
  deletedRows: number
  filesWithDv: number
}

function fileStats(files: readonly AddFile[]): FileStats {
  let bytes = 0
  let physical: number | undefined = 0
  let deleted = 0
  let withDv = 0
  for (const f of files) {
    bytes += Number(f.size)
    const n = numRecords(f)
    physical = physical === undefined || n === undefined ? undefined : physical + n
    const d = Number(f.deletionVector?.cardinality ?? 0n)
    deleted += d
    if (f.deletionVector) withDv++
  }
  return {
    bytes,
    physicalRows: physical,
    liveRows: physical === undefined ? undefined : physical - deleted,
    deletedRows: deleted,
    filesWithDv: withDv,
  }
}

function numRecords(f: AddFile): number | undefined {
  if (f.stats === undefined) return undefined
  const m = /"numRecords"\s*:\s*(\d+)/.exec(f.stats)
  return m ? Number(m[1]) : undefined
}

function fileJson(f: AddFile) {
  return {
    path: f.path,
    size: Number(f.size),
    rows: numRecords(f) ?? null,
    deletedRows: Number(f.deletionVector?.cardinality ?? 0n),
    partitionValues: f.partitionValues,
  }
}

/**
 * The schema as an indented, aligned tree: one line per field with its type and nullability.
 *
 * @param schema - the table schema
 * @param painter - styles
 * @returns the lines
 */
export function schemaLines(schema: StructType, painter: Painter): string[] {
  const entries: Array<{ name: string; type: string; notNull: boolean; notes: string }> = []
  const topNotes = fieldNotesOf(schema)
  const walk = (fields: readonly StructField[], depth: number) => {
    for (const f of fields) {
      entries.push({
        name: `${'  '.repeat(depth)}${f.name}`,
        type: typeText(f.type),
        notNull: !f.nullable,
        notes: depth === 0 ? (topNotes.get(f.name) ?? '') : '',
      })
      const inner = structOf(f.type)
      if (inner) walk(inner.fields, depth + 1)
    }
  }
  walk(schema.fields, 0)
  let nameW = 0
  let typeW = 0
  for (const e of entries) {
    nameW = Math.max(nameW, e.name.length)
    typeW = Math.max(typeW, e.type.length)
  }
  return entries.map((e) =>
    `${pad(e.name, nameW)}  ${pad(painter.paint('cyan', e.type), typeW)}${e.notNull ? `  ${painter.paint('yellow', 'not null')}` : ''}${e.notes === '' ? '' : `  ${painter.paint('dim', e.notes)}`}`.trimEnd(),
  )
}

/** How each top-level field is computed (generated or identity column), and its comment, as DDL. */
function fieldNotesOf(schema: StructType): Map<string, string> {
  const notes = new Map<string, string[]>()
  const note = (name: string, text: string) => notes.set(name, [...(notes.get(name) ?? []), text])
  for (const g of generatedColumnsOf(schema)) note(g.name, `generated always as (${g.expression})`)
  try {
    for (const id of identityColumnsOf(schema)) {
      const mark = id.highWaterMark === undefined ? '' : `, high-water mark ${id.highWaterMark}`
      const kind = id.allowExplicitInsert ? 'by default' : 'always'
      note(id.name, `generated ${kind} as identity (start with ${id.start} increment by ${id.step}${mark})`)
    }
  } catch {
    // Malformed identity metadata: writes refuse it with the reason; describe still shows the rest.
  }
  for (const f of schema.fields) {
    const comment = f.metadata.comment
    if (typeof comment === 'string') note(f.name, `comment ${JSON.stringify(comment)}`)
  }
  return new Map([...notes].map(([k, v]) => [k, v.join(', ')]))
}

function structOf(t: DataType): StructType | undefined {
  if (typeof t === 'string') return undefined
  if (t.type === 'struct') return t
  if (t.type === 'array') return structOf(t.elementType)
  return undefined
}

function typeText(t: DataType): string {
  if (typeof t === 'string') return t
  if (t.type === 'struct') return 'struct'
  if (t.type === 'array') return `array<${typeText(t.elementType)}>`
  return `map<${typeText(t.keyType)}, ${typeText(t.valueType)}>`
}
