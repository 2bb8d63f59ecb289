/**
 * Renders the live interoperability matrix into docs/interoperability.md, between the markers
 * `<!-- peers-matrix:start -->` and `<!-- peers-matrix:end -->`, from the cells the peer tier
 * recorded (`.peers/results/*.json`, written by `npm run test:peers`) and the versions
 * `peers:setup` installed (`.peers/versions.json`). The table is generated, never typed by hand:
 * run `npm run test:peers && npm run peers:matrix` and commit the doc.
 *
 * Usage: `tsx scripts/peers-matrix.ts [--check]` (`--check` exits 1 when the doc is stale).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

interface Cell {
  feature: string
  direction: 'a' | 'b' | 'c'
  engine: 'spark' | 'delta-rs'
  result: 'pass' | 'refused' | 'fail'
  message?: string
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const peers = process.env.DELTA_RLC_PEERS ?? path.join(root, '.peers')
const resultsDir = path.join(peers, 'results')
const doc = path.join(root, 'docs', 'interoperability.md')
const START = '<!-- peers-matrix:start -->'
const END = '<!-- peers-matrix:end -->'

if (!existsSync(resultsDir)) {
  process.stderr.write(`no results in ${resultsDir}: run \`npm run test:peers\` first\n`)
  process.exit(1)
}
const cells: Cell[] = []
for (const file of readdirSync(resultsDir).sort()) {
  if (!file.endsWith('.json')) continue
  const data = JSON.parse(readFileSync(path.join(resultsDir, file), 'utf8')) as { cells: Cell[] }
  for (const c of data.cells) cells.push(c)
}
const versions = JSON.parse(readFileSync(path.join(peers, 'versions.json'), 'utf8')) as Record<string, string>

const COLUMNS: ReadonlyArray<readonly [Cell['engine'], Cell['direction'], string]> = [
  ['spark', 'a', 'Spark writes, we read'],
  ['spark', 'b', 'we write, Spark reads'],
  ['spark', 'c', 'Spark and we write on each other'],
  ['delta-rs', 'a', 'delta-rs writes, we read'],
  ['delta-rs', 'b', 'we write, delta-rs reads'],
  ['delta-rs', 'c', 'delta-rs and we write on each other'],
]

const features = [...new Set(cells.map((c) => c.feature))]
const mark = (feature: string, engine: string, direction: string): string => {
  const here = cells.filter((c) => c.feature === feature && c.engine === engine && c.direction === direction)
  if (here.length === 0) return '·'
  if (here.some((c) => c.result === 'fail')) return 'FAIL'
  const refused = here.find((c) => c.result === 'refused')
  if (refused !== undefined) return `refused: ${(refused.message ?? '').replaceAll('|', '\\|')}`
  return 'pass'
}

const lines: string[] = [
  START,
  '',
  `Versions: pyspark ${versions.pyspark} with delta-spark ${versions['delta-spark']}, deltalake (delta-rs) ${versions.deltalake}, pyarrow ${versions.pyarrow}, Python ${versions.python}, ${versions.java}.`,
  '',
  `| feature | ${COLUMNS.map(([, , title]) => title).join(' | ')} |`,
  `| --- | ${COLUMNS.map(() => '---').join(' | ')} |`,
]
for (const feature of features) {
  lines.push(
    `| ${feature} | ${COLUMNS.map(([engine, direction]) => mark(feature, engine, direction)).join(' | ')} |`,
  )
}
const count = (engine: string, direction: string): number =>
  features.filter((f) => {
    const m = mark(f, engine, direction)
    return m !== '·' && m !== 'FAIL'
  }).length
lines.push(
  '',
  `Cells covered: Spark ${['a', 'b', 'c'].map((d) => `(${d}) ${count('spark', d)}`).join(', ')}; delta-rs ${['a', 'b', 'c'].map((d) => `(${d}) ${count('delta-rs', d)}`).join(', ')}. "·" is a cell the tier does not run yet.`,
  '',
  END,
)
const block = lines.join('\n')

const text = readFileSync(doc, 'utf8')
const start = text.indexOf(START)
const end = text.indexOf(END)
if (start < 0 || end < 0) {
  process.stderr.write(`${doc} has no ${START} ... ${END} block\n`)
  process.exit(1)
}
const next = text.slice(0, start) + block + text.slice(end + END.length)
if (process.argv.includes('--check')) {
  if (next !== text) {
    process.stderr.write('docs/interoperability.md: the live matrix is stale; run npm run peers:matrix\n')
    process.exit(1)
  }
} else {
  writeFileSync(doc, next)
  process.stdout.write(`docs/interoperability.md: ${features.length} features, ${cells.length} cells\n`)
}
