// Helpers shared by the test files: the environment scripts/ci-mcp-ts.sh
// sets, and an SDK client connected to `hub mcp` over stdio.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this through scripts/ci-mcp-ts.sh`);
  return v;
}

// stdioClient starts `hub mcp` (HUB_BIN) for token and connects to it,
// declaring capabilities (say, experimental claude/channel).
export async function stdioClient(token, name, capabilities = {}) {
  return (await stdioProcess(token, name, capabilities)).client;
}

// stdioProcess is stdioClient that also returns the `hub mcp` process ID.
export async function stdioProcess(token, name, capabilities = {}) {
  const transport = new StdioClientTransport({
    command: env('HUB_BIN'),
    args: ['mcp'],
    env: { ...process.env, HUB_ADDR: env('HUB_ADDR'), HUB_TOKEN: token },
    stderr: 'inherit',
  });
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return { client, pid: transport.pid };
}
