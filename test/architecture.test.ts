/**
 * The layering of the design brief, enforced from one table (`layers.ts`): every import of every
 * file under src/ is checked against its layer's row. Pure modules (protocol, dv, expressions,
 * log, conflict) do no I/O and have no async code; storage knows nothing of Delta; the engine
 * interfaces hold no implementation; the CLI and the race use the package's entry points only.
 */
import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { LAYERS, type Layer } from './layers.js'

const src = fileURLToPath(new URL('../src/', import.meta.url))

/** Every TypeScript file under src/, relative to it. */
async function sourceFiles(): Promise<string[]> {
  const entries = await readdir(src, { recursive: true })
  return entries
    .map(String)
    .filter((f) => f.endsWith('.ts'))
    .sort()
}

/** Source text without comments, so that documentation may mention what code must not do. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
}

interface Import {
  readonly spec: string
  /** `import type` or `export type`: erased from the built code. */
  readonly typeOnly: boolean
}

function importsOf(text: string): Import[] {
  const found: Import[] = []
  for (const m of text.matchAll(/^\s*(?:import|export)(\s+type\b)?[^'"]*from\s+['"]([^'"]+)['"]/gm)) {
    found.push({ spec: m[2] as string, typeOnly: m[1] !== undefined })
  }
  for (const m of text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm))
    found.push({ spec: m[1] as string, typeOnly: false })
  return found
}

/** The layer of a file: its folder under src/, or the file itself at the top of src/. */
function layerOf(file: string): string {
  return file.split('/')[0] as string
}

/**
 * What an import names: a layer (`'protocol'`), an entry file (`'index.ts'`,
 * `'subpaths/engine.ts'`), `'node:'` for a built-in, or an npm package name.
 */
function target(file: string, spec: string): string {
  if (spec.startsWith('node:')) return 'node:'
  if (!spec.startsWith('.')) {
    const parts = spec.split('/')
    return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string)
  }
  const parts = relative(src, join(src, file, '..', spec)).split('/')
  const source = (name: string | undefined) => (name ?? '').replace(/\.js$/, '.ts')
  if (parts.length === 1) return source(parts[0])
  if (parts[0] === 'subpaths') return `subpaths/${source(parts[1])}`
  return parts[0] as string
}

/** Whether `layer` may import `t` (a layer, an entry file, a package) with this import. */
function allows(name: string, layer: Layer, t: string, typeOnly: boolean): boolean {
  if (t === 'node:') return layer.node === true
  const internal = t in LAYERS || t.startsWith('subpaths/')
  if (!internal) return (layer.packages ?? []).includes(t)
  if (layer.typesOnly && !typeOnly) return false
  const home = t.startsWith('subpaths/') ? 'subpaths' : t
  if (home === name) return true
  const listed = [...layer.imports, ...(layer.todo ?? [])]
  if (listed.includes(t) || listed.includes(home)) return true
  return typeOnly && (layer.types ?? []).includes(home)
}

/** The imports of one file that its layer's row does not allow, as `file imports spec`. */
function violations(file: string, text: string): string[] {
  const name = layerOf(file)
  const layer = LAYERS[name]
  if (layer === undefined) return [`${file} is in no layer of layers.ts`]
  const found: string[] = []
  for (const { spec, typeOnly } of importsOf(code(text))) {
    if (!allows(name, layer, target(file, spec), typeOnly)) {
      found.push(`${file} imports ${typeOnly ? 'types from ' : ''}${spec}`)
    }
  }
  if (layer.pure && file !== join('dv', 'initialization.ts') && /\basync\b|\bawait\b/.test(code(text))) {
    // The DV codec's one-time wasm set-up is the single documented async entry point.
    found.push(`${file} has async code`)
  }
  return found
}

describe('module boundaries (layers.ts)', () => {
  it('every file under src/ belongs to a layer of the table', async () => {
    const missing = (await sourceFiles()).filter((f) => LAYERS[layerOf(f)] === undefined)
    assert.deepEqual(missing, [], `add a row to test/layers.ts for: ${missing.join(', ')}`)
  })

  for (const [name, layer] of Object.entries(LAYERS)) {
    const rule = [
      ...layer.imports,
      ...(layer.types ?? []).map((t) => `types of ${t}`),
      ...(layer.todo ?? []).map((t) => `${t} (until fixed)`),
    ]
    it(`${name} imports only ${rule.length === 0 ? 'nothing internal' : rule.join(', ')}${layer.pure ? '; pure' : ''}`, async () => {
      const files = (await sourceFiles()).filter((f) => layerOf(f) === name)
      assert.ok(files.length > 0, `no file in the layer ${name}`)
      const found: string[] = []
      for (const f of files)
        for (const v of violations(f, await readFile(join(src, f), 'utf8'))) found.push(v)
      assert.deepEqual(found, [], `imports the layer table does not allow:\n${found.join('\n')}`)
    })
  }

  it('the layers form no cycle (leaving out the imports still to be removed)', () => {
    const state = new Map<string, 'open' | 'done'>()
    const visit = (name: string, path: readonly string[]): void => {
      if (state.get(name) === 'done') return
      assert.notEqual(state.get(name), 'open', `cycle: ${[...path, name].join(' -> ')}`)
      state.set(name, 'open')
      const layer = LAYERS[name] as Layer
      for (const next of [...layer.imports, ...(layer.types ?? [])]) {
        const home = next.startsWith('subpaths/') ? 'subpaths' : next
        if (home !== name) visit(home, [...path, name])
      }
      state.set(name, 'done')
    }
    for (const name of Object.keys(LAYERS)) visit(name, [])
  })

  it('every layer the table names exists', () => {
    for (const [name, layer] of Object.entries(LAYERS)) {
      for (const t of [...layer.imports, ...(layer.types ?? []), ...(layer.todo ?? [])]) {
        const home = t.startsWith('subpaths/') ? 'subpaths' : t
        assert.ok(home in LAYERS, `${name} names ${t}, which is no layer`)
      }
    }
  })

  it('the check flags what a row does not allow, and passes what it does', () => {
    assert.deepEqual(violations('protocol/x.ts', "import type { Engine } from '../engine/engine.js'"), [
      'protocol/x.ts imports types from ../engine/engine.js',
    ])
    assert.deepEqual(violations('log/x.ts', "import { readFile } from 'node:fs/promises'"), [
      'log/x.ts imports node:fs/promises',
    ])
    assert.deepEqual(violations('conflict/x.ts', 'export async function f() {}'), [
      'conflict/x.ts has async code',
    ])
    // Types of storage only: the value import is refused, the type import passes.
    assert.deepEqual(violations('snapshot/x.ts', "import { openStore } from '../storage/index.js'"), [
      'snapshot/x.ts imports ../storage/index.js',
    ])
    assert.deepEqual(
      violations('snapshot/x.ts', "import type { FileMeta } from '../storage/object-store.js'"),
      [],
    )
    assert.deepEqual(violations('race/x.ts', "import { loadSnapshot } from '../snapshot/load-snapshot.js'"), [
      'race/x.ts imports ../snapshot/load-snapshot.js',
    ])
    assert.deepEqual(violations('race/x.ts', "import { loadSnapshot } from '../subpaths/testing.js'"), [])
    assert.deepEqual(violations('race/x.ts', "import { createSnapshotView } from '../subpaths/duckdb.js'"), [
      'race/x.ts imports ../subpaths/duckdb.js',
    ])
    assert.deepEqual(
      violations('cli/commands/x.ts', "import { DeltaTable } from '../../table/delta-table.js'"),
      ['cli/commands/x.ts imports ../../table/delta-table.js'],
    )
    assert.deepEqual(violations('engine-default/x.ts', "import { parquet } from 'hyparquet'"), [
      'engine-default/x.ts imports hyparquet',
    ])
    assert.deepEqual(violations('nowhere/x.ts', ''), ['nowhere/x.ts is in no layer of layers.ts'])
  })

  it('storage/ knows nothing of Delta', async () => {
    for (const f of (await sourceFiles()).filter((f) => layerOf(f) === 'storage')) {
      const text = code(await readFile(join(src, f), 'utf8'))
      assert.ok(!text.includes('_delta_log'), `${f} mentions _delta_log`)
    }
  })
})

// === Spread arguments ===

const repo = fileURLToPath(new URL('../', import.meta.url))

/**
 * Calls allowed to spread an array into their arguments, as `file -> callee texts`. Only for a
 * spread of a provably small, fixed-size array, with the reason beside the entry; every other
 * call takes its items in a loop or as one array argument.
 */
const SPREAD_ALLOWED: Readonly<Record<string, readonly string[]>> = {
  // A store wrapper forwards a method's own arguments (`...args: Parameters<ObjectStore['put']>`):
  // a tuple of at most three, fixed by the method's signature.
  [join('src', 'cli', 'interrupt.ts')]: ['target.put', 'target.delete'],
}

/** Every spread argument (`f(...xs)`, `new C(...xs)`) in a file, as `file:line: call`. */
function spreadCalls(file: string, text: string): string[] {
  // Parsing is the slow part: a file with no `...` after `(` or `,` has no spread argument.
  if (!/[(,]\s*\.\.\./.test(text)) return []
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && node.arguments?.some(ts.isSpreadElement)) {
      const callee = node.expression.getText(source)
      if (!(SPREAD_ALLOWED[file] ?? []).includes(callee)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
        found.push(`${file}:${line}: ${ts.isNewExpression(node) ? 'new ' : ''}${callee}(...)`)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe('no array spread into call arguments', () => {
  // `push(...rows)`, `Math.max(...values)`, `String.fromCharCode(...bytes)`: each puts every
  // element on the call stack, and above about 100,000 elements the call throws a RangeError
  // (a 150,000-row MERGE once failed so). Library and tool code loops instead (src/util/arrays.ts).
  it('src/, bench/, scripts/ and test/helpers/ pass no array to a call by spreading it', async () => {
    const found: string[] = []
    for (const root of ['src', 'bench', 'scripts', join('test', 'helpers')]) {
      const entries = await readdir(join(repo, root), { recursive: true }).catch(() => [])
      for (const entry of entries.map(String).filter((f) => f.endsWith('.ts'))) {
        const file = join(root, entry)
        for (const hit of spreadCalls(file, await readFile(join(repo, file), 'utf8'))) found.push(hit)
      }
    }
    assert.deepEqual(
      found,
      [],
      `spread arguments (use a loop or appendAll/maxOf/minOf):\n${found.join('\n')}`,
    )
  })

  it('the check finds a spread in a call, but not in an array or object literal', () => {
    const hits = spreadCalls(
      'example.ts',
      'a.push(...b); Math.max(0, ...c); new Set(...d); const e = [...f]; const g = { ...h }',
    )
    assert.deepEqual(hits, [
      'example.ts:1: a.push(...)',
      'example.ts:1: Math.max(...)',
      'example.ts:1: new Set(...)',
    ])
  })
})
