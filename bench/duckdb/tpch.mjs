// bench/duckdb/tpch.mjs: the 22 TPC-H validation queries in DuckDB on
// dbgen .tbl files, for the comparison in docs/BENCHMARKS.md. Setup:
// `npm install @duckdb/node-api@1.5.6-r.1` in this folder. Usage:
//   node tpch.mjs DATA_DIR SQL_DIR [THREADS] [REPEATS]
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';

const [data, sqlDir, threads = '2', repeats = '3'] = process.argv.slice(2);
const db = await DuckDBInstance.create(':memory:', { threads });
const con = await db.connect();
const tables = {
  nation: 'n_nationkey INT, n_name VARCHAR, n_regionkey INT, n_comment VARCHAR',
  region: 'r_regionkey INT, r_name VARCHAR, r_comment VARCHAR',
  part: 'p_partkey INT, p_name VARCHAR, p_mfgr VARCHAR, p_brand VARCHAR, p_type VARCHAR, p_size INT, p_container VARCHAR, p_retailprice DECIMAL(15,2), p_comment VARCHAR',
  supplier: 's_suppkey INT, s_name VARCHAR, s_address VARCHAR, s_nationkey INT, s_phone VARCHAR, s_acctbal DECIMAL(15,2), s_comment VARCHAR',
  partsupp: 'ps_partkey INT, ps_suppkey INT, ps_availqty INT, ps_supplycost DECIMAL(15,2), ps_comment VARCHAR',
  customer: 'c_custkey INT, c_name VARCHAR, c_address VARCHAR, c_nationkey INT, c_phone VARCHAR, c_acctbal DECIMAL(15,2), c_mktsegment VARCHAR, c_comment VARCHAR',
  orders: 'o_orderkey INT, o_custkey INT, o_orderstatus VARCHAR, o_totalprice DECIMAL(15,2), o_orderdate DATE, o_orderpriority VARCHAR, o_clerk VARCHAR, o_shippriority INT, o_comment VARCHAR',
  lineitem: 'l_orderkey INT, l_partkey INT, l_suppkey INT, l_linenumber INT, l_quantity DECIMAL(15,2), l_extendedprice DECIMAL(15,2), l_discount DECIMAL(15,2), l_tax DECIMAL(15,2), l_returnflag VARCHAR, l_linestatus VARCHAR, l_shipdate DATE, l_commitdate DATE, l_receiptdate DATE, l_shipinstruct VARCHAR, l_shipmode VARCHAR, l_comment VARCHAR',
};
let t0 = performance.now();
for (const [name, cols] of Object.entries(tables)) {
  await con.run(`CREATE TABLE ${name} (${cols}, dummy VARCHAR)`);
  await con.run(`COPY ${name} FROM '${data}/${name}.tbl' (DELIMITER '|', HEADER false)`);
}
console.log(`load ${((performance.now() - t0) / 1000).toFixed(2)} s`);
let total = 0, logsum = 0;
for (let q = 1; q <= 22; q++) {
  const sql = readFileSync(`${sqlDir}/q${String(q).padStart(2, '0')}.sql`, 'utf8');
  let best = Infinity;
  for (let r = 0; r < Number(repeats); r++) {
    t0 = performance.now();
    await con.runAndReadAll(sql);
    best = Math.min(best, performance.now() - t0);
  }
  total += best;
  logsum += Math.log(best);
  console.log(`q${String(q).padStart(2, '0')} ${best.toFixed(1)} ms`);
}
console.log(`total ${total.toFixed(0)} ms, geometric mean ${Math.exp(logsum / 22).toFixed(1)} ms`);
