// The cost of post_message through MCP, measured with the official
// TypeScript SDK as the client: server CPU per post (read from
// /proc/PID/stat for the hub and each `hub mcp` process) with several
// clients posting at once, over streamable HTTP (/mcp) and over stdio, and
// the latency of sequential posts through one `hub mcp`.
//
// scripts/bench-mcp.sh starts the hub and sets:
//   HUB_BIN, HUB_ADDR, HUB_MCP_URL  as for the tests (stdio.mjs)
//   HUB_PID                         the hub's process ID
//   BENCH_TOKENS                    one agent token per client, comma-separated
//   BENCH_TO                        the agent every post is sent to
//   BENCH_POSTS                     posts per client in each concurrent run
//   BENCH_SEQ                       posts in the sequential run
//   BENCH_SCENARIOS                 any of http,stdio,seq (comma-separated)
//   CLK_TCK                         clock ticks per second (getconf CLK_TCK)
// It prints one JSON object per scenario on stdout.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { env, stdioProcess } from './stdio.mjs';

const clkTck = Number(env('CLK_TCK'));
const hubPID = Number(env('HUB_PID'));
const tokens = env('BENCH_TOKENS').split(',');
const to = env('BENCH_TO');
const posts = Number(env('BENCH_POSTS'));
const seqPosts = Number(env('BENCH_SEQ'));
const scenarios = env('BENCH_SCENARIOS').split(',');
const warmup = 20;

// cpuSeconds is the user + system CPU a process has used so far.
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command name: state is field 3, utime 14 and stime 15.
  return (Number(fields[11]) + Number(fields[12])) / clkTck;
}

// rssMiB is a process's resident memory.
function rssMiB(pid) {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1];
  return Number(kb) / 1024;
}

function cpu(pids) {
  return pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
}

async function httpClient(token, name) {
  const transport = new StreamableHTTPClientTransport(new URL(env('HUB_MCP_URL')), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return { client, pid: null };
}

async function post(client, i) {
  const res = await client.callTool({ name: 'post_message', arguments: { to: [to], body: `bench message ${i}` } });
  if (res.isError) throw new Error(`post_message failed: ${JSON.stringify(res.content)}`);
}

async function postMany(client, n) {
  for (let i = 0; i < n; i++) await post(client, i);
}

// concurrent has every client post `posts` messages at once and reports
// the server CPU (the hub and the clients' bridge processes) per post.
async function concurrent(name, connect) {
  const conns = await Promise.all(tokens.map((t, i) => connect(t, `bench-${i}`)));
  try {
    await Promise.all(conns.map((c) => postMany(c.client, warmup)));
    const bridges = conns.map((c) => c.pid).filter((pid) => pid !== null);
    const hub0 = cpu([hubPID]);
    const bridge0 = cpu(bridges);
    const t0 = process.hrtime.bigint();
    await Promise.all(conns.map((c) => postMany(c.client, posts)));
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    const n = posts * conns.length;
    const hubUS = ((cpu([hubPID]) - hub0) / n) * 1e6;
    const bridgeUS = ((cpu(bridges) - bridge0) / n) * 1e6;
    const bridgeRSS = bridges.length ? bridges.reduce((sum, pid) => sum + rssMiB(pid), 0) / bridges.length : null;
    return {
      scenario: name, clients: conns.length, posts: n, posts_per_s: Math.round(n / secs),
      hub_cpu_us_per_post: Math.round(hubUS), bridge_cpu_us_per_post: Math.round(bridgeUS),
      server_cpu_us_per_post: Math.round(hubUS + bridgeUS),
      hub_rss_mib: Math.round(rssMiB(hubPID)),
      ...(bridgeRSS === null ? {} : { bridge_rss_mib: Math.round(bridgeRSS * 10) / 10 }),
    };
  } finally {
    await Promise.all(conns.map((c) => c.client.close()));
  }
}

// sequential posts one message at a time through one `hub mcp` and reports
// the round trip as the client sees it.
async function sequential() {
  const c = await stdioProcess(tokens[0], 'bench-seq');
  try {
    await postMany(c.client, warmup);
    const hub0 = cpu([hubPID]);
    const bridge0 = cpu([c.pid]);
    const ms = [];
    for (let i = 0; i < seqPosts; i++) {
      const t0 = process.hrtime.bigint();
      await post(c.client, i);
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    ms.sort((x, y) => x - y);
    const q = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))].toFixed(3);
    return {
      scenario: 'seq-stdio', posts: seqPosts, p50_ms: Number(q(0.5)), p90_ms: Number(q(0.9)), p99_ms: Number(q(0.99)),
      hub_cpu_us_per_post: Math.round(((cpu([hubPID]) - hub0) / seqPosts) * 1e6),
      bridge_cpu_us_per_post: Math.round(((cpu([c.pid]) - bridge0) / seqPosts) * 1e6),
    };
  } finally {
    await c.client.close();
  }
}

for (const s of scenarios) {
  let r;
  switch (s) {
    case 'http': r = await concurrent('http', httpClient); break;
    case 'stdio': r = await concurrent('stdio', stdioProcess); break;
    case 'seq': r = await sequential(); break;
    default: throw new Error(`unknown scenario ${s}: want http, stdio or seq`);
  }
  console.log(JSON.stringify(r));
}
