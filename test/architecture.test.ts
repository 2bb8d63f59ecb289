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

  it('cli/ uses the public API only', async () => {
    for (const f of await filesOf('cli')) {
      const text = code(await readFile(join(src, f), 'utf8'))
      for (const spec of importsOf(text)) {
        if (!spec.startsWith('.')) continue
        const t = target(f, spec)
        assert.ok(['cli', 'index.js', 'race'].includes(t), `${f} imports ${spec}`)
      }
    }
  })
})
