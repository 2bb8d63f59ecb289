/**
 * The package's shape: every dependency pinned exactly, the build entry points declared, and
 * no cloud SDK or test server leaking into the runtime dependencies by accident.
 */
import assert from 'node:assert/strict'
import { access, readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'))

describe('package.json', () => {
  it('pins every dependency to an exact version', () => {
    for (const field of ['dependencies', 'devDependencies'] as const) {
      for (const [name, version] of Object.entries(pkg[field] ?? {})) {
        assert.match(
          String(version),
          /^\d+\.\d+\.\d+(-[\w.]+)?$/,
          `${field}.${name} = ${version} is not an exact pin`,
        )
      }
    }
  })

  it('declares the ESM entry, types and the CLI', () => {
    assert.equal(pkg.type, 'module')
    assert.equal(pkg.exports['.'].default, './dist/src/index.js')
    assert.equal(pkg.exports['.'].types, './dist/src/index.d.ts')
    assert.equal(pkg.bin['delta-rlc'], './dist/src/cli/main.js')
  })

  it('declares each subpath with its types and its built entry, built from one file under src/', async () => {
    assert.deepEqual(Object.keys(pkg.exports), [
      '.',
      './engine',
      './storage/azure',
      './storage/s3',
      './storage/gcs',
      './duckdb',
      './testing',
    ])
    for (const [subpath, target] of Object.entries(pkg.exports) as [string, Record<string, string>][]) {
      // `types` first: resolvers take the first condition that matches.
      assert.deepEqual(Object.keys(target), ['types', 'default'], subpath)
      const built = /^\.\/dist\/(src\/.+)\.js$/.exec(target.default ?? '')
      assert.ok(built, `${subpath}: ${target.default} is not a file under dist/src`)
      assert.equal(target.types, `./dist/${built[1]}.d.ts`, subpath)
      await access(new URL(`../${built[1]}.ts`, import.meta.url))
    }
  })

  it('keeps test servers out of the runtime dependencies', () => {
    for (const dev of ['azurite', 's3rver', 'tsx', 'typescript', 'fast-check', '@biomejs/biome']) {
      assert.equal(pkg.dependencies?.[dev], undefined, `${dev} must be a devDependency`)
    }
  })
})
