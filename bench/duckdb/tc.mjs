// bench/duckdb/tc.mjs: the transitive closure benchmark in DuckDB, for the
// comparison in docs/BENCHMARKS.md. Setup: `npm install @duckdb/node-api@1.5.6-r.1`
// in this folder (npm ships DuckDB's prebuilt library). Usage:
//   node tc.mjs EDGES.tbl [THREADS]
import { DuckDBInstance } from '@duckdb/node-api';

const [file, threads = '2'] = process.argv.slice(2);
const db = await DuckDBInstance.create(':memory:', { threads });
const con = await db.connect();
await con.run(`CREATE TABLE edge AS SELECT column0::BIGINT AS x, column1::BIGINT AS y
               FROM read_csv('${file}', delim='|', header=false, columns={'column0':'BIGINT','column1':'BIGINT','column2':'VARCHAR'})`);
const q = `WITH RECURSIVE path(x, y) AS (SELECT x, y FROM edge UNION SELECT path.x, edge.y FROM path JOIN edge ON path.y = edge.x)
           SELECT count(*) FROM path`;
let best = Infinity, n = 0;
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  const r = await con.runAndReadAll(q);
  const t = performance.now() - t0;
  n = r.getRows()[0][0];
  best = Math.min(best, t);
}
console.log(`duckdb ${threads} threads: ${n} path tuples, best of 3: ${(best / 1000).toFixed(3)} s`);
