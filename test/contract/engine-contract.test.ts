/**
 * The Engine contract (`engine-contract.ts`) run against the default engine. Another engine is
 * checked the same way: one more `engineContract` call with its factory.
 */
import { createDefaultEngine } from '../../src/subpaths/engine.js'
import { engineContract } from './engine-contract.js'

engineContract('default (DuckDB)', (storage) => createDefaultEngine(storage, { threads: 1 }))
