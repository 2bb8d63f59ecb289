/**
 * `npm run build` leaves the CLI's entry point executable, so that the `delta-rlc` bin runs as
 * the README shows it (`delta-rlc --help`, `npx delta-rlc ...` in the repository): the file is
 * run by its `#!/usr/bin/env node` line, not through `node`. A build that left mode 644 made it
 * fail with "Permission denied".
 */
import assert from 'node:assert/strict'
import { statSync } from 'node:fs'
import { describe, it } from 'node:test'
import { buildCli, CLI, REPO_ROOT, startProcess } from '../helpers/cli-build.js'

describe('the built CLI', () => {
  it('is executable after npm run build, and runs by itself', async () => {
    await buildCli()
    const mode = statSync(CLI).mode
    assert.equal(mode & 0o755, 0o755, `mode ${(mode & 0o777).toString(8)}`)
    // Run the file itself, as a shell (or npx) runs a package's bin.
    const r = await startProcess(CLI, ['--help'], { cwd: REPO_ROOT, env: { ...process.env, NO_COLOR: '1' } })
      .done
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /delta-rlc/)
  })
})
