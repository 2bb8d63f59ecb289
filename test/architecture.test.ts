/**
 * The layering of the design brief, enforced: pure modules (protocol, dv, expressions, log,
 * conflict) do no I/O and import no runtime or I/O layer; storage knows nothing of Delta; the
 * CLI uses the public API only.
 */
import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const src = fileURLToPath(new URL('../src/', import.meta.url))

async function filesOf(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(join(src, dir), { recursive: true })
    return entries
      .map(String)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(dir, f))
  } catch {
    return []
  }
}

/** Source text without comments, so that documentation may mention what code must not do. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
}

function importsOf(text: string): string[] {
  return [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1] as string)
}

/** The top-level module an import resolves to, relative to src/, or the package name. */
function target(file: string, spec: string): string {
  if (!spec.startsWith('.')) return spec
  const abs = join(src, file, '..', spec)
  return relative(src, abs).split('/')[0] as string
}

const PURE = ['protocol', 'dv', 'expressions', 'log', 'conflict']
const ALLOWED: Record<string, readonly string[]> = {
  protocol: ['errors', 'util', 'protocol'],
  dv: ['errors', 'util', 'dv', 'protocol'],
  expressions: ['errors', 'util', 'expressions', 'protocol'],
  log: ['errors', 'util', 'log', 'protocol', 'dv', 'expressions'],
  conflict: ['errors', 'util', 'conflict', 'protocol', 'dv', 'expressions', 'log'],
  storage: ['errors', 'util', 'storage'],
}
/** Packages pure modules may use: exact JSON numbers and the bitmap library. */
const PURE_PACKAGES = ['lossless-json', 'roaring-wasm']

describe('module boundaries', () => {
  for (const mod of PURE) {
    it(`${mod}/ is pure: no node:* import, no I/O layer, no async code`, async () => {
      const files = await filesOf(mod)
      assert.ok(files.length > 0)
      for (const f of files) {
        const text = code(await readFile(join(src, f), 'utf8'))
        for (const spec of importsOf(text)) {
          assert.ok(!spec.startsWith('node:'), `${f} imports ${spec}`)
          const t = target(f, spec)
          assert.ok(
            (ALLOWED[mod] as readonly string[]).includes(t) || PURE_PACKAGES.includes(t),
            `${f} imports ${spec} (${t})`,
          )
        }
        // The DV codec's one-time wasm set-up is the single documented async entry point.
        if (f !== join('dv', 'initialization.ts'))
          assert.ok(!/\basync\b|\bawait\b/.test(text), `${f} has async code`)
      }
    })
  }

  it('storage/ knows nothing of Delta', async () => {
    for (const f of await filesOf('storage')) {
      const text = code(await readFile(join(src, f), 'utf8'))
      for (const spec of importsOf(text)) {
        if (!spec.startsWith('.')) continue
        const t = target(f, spec)
        assert.ok((ALLOWED.storage as readonly string[]).includes(t), `${f} imports ${spec}`)
      }
      assert.ok(!text.includes('_delta_log'), `${f} mentions _delta_log`)
    }
  })

  it('txn/ knows no operation: it imports neither ops/ nor a layer above it', async () => {
    const above = ['ops', 'table', 'cli', 'race', 'engine-default', 'index.js']
    for (const f of await filesOf('txn')) {
      const text = code(await readFile(join(src, f), 'utf8'))
      for (const spec of importsOf(text)) {
        if (spec.startsWith('.')) assert.ok(!above.includes(target(f, spec)), `${f} imports ${spec}`)
      }
    }
  })

  it('cli/ uses the public API only: the package root and its declared subpaths', async () => {
    for (const f of await filesOf('cli')) {
      const text = code(await readFile(join(src, f), 'utf8'))
      for (const spec of importsOf(text)) {
        if (!spec.startsWith('.')) continue
        const t = target(f, spec)
        assert.ok(['cli', 'index.js', 'subpaths', 'race'].includes(t), `${f} imports ${spec}`)
      }
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
