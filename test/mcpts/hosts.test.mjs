// Starts `hub mcp` the way docs/hosts.md tells users to configure their agent
// host, so the guide's lines are tested rather than just written:
//
//   - the Claude Code line `claude mcp add hub --env K=V … -- hub mcp`,
//     parsed word by word into a command, its arguments and its env;
//   - the Gemini CLI settings.json snippet (mcpServers.hub), parsed as JSON.
//
// Like the hosts, the test starts the command from PATH with a small
// inherited environment plus the config's env, never the test's own HUB_*
// variables. The only substitutions are the two placeholders a user fills
// in: <token> and the default address 127.0.0.1:7700 (the test hub listens
// on a free port). Each host lists the tools, then one agent waits while the
// other posts, and the wake-up must carry the message.
//
// Needs what scripts/ci-mcp-ts.sh sets: HUB_BIN, HUB_ADDR, AGENT_D, TOKEN_D,
// AGENT_E, TOKEN_E.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this through scripts/ci-mcp-ts.sh`);
  return v;
}

const guide = readFileSync(new URL('../../docs/hosts.md', import.meta.url), 'utf8');
const DEFAULT_ADDR = '127.0.0.1:7700';

// claudeConfig parses docs/hosts.md's `claude mcp add` line.
function claudeConfig() {
  const line = guide.split('\n').find((l) => l.startsWith('claude mcp add '));
  assert.ok(line, 'docs/hosts.md has no `claude mcp add` line');
  const words = line.trim().split(/\s+/);
  const dash = words.indexOf('--');
  assert.ok(dash > 0 && words[dash + 1], `no "-- COMMAND" in ${line}`);
  const config = { command: words[dash + 1], args: words.slice(dash + 2), env: {} };
  for (let i = 4; i < dash; i++) {
    assert.equal(words[i], '--env', `unexpected option ${words[i]} in ${line}`);
    const [k, ...v] = words[++i].split('=');
    config.env[k] = v.join('=');
  }
  return config;
}

// geminiConfig parses docs/hosts.md's settings.json snippet for Gemini CLI.
function geminiConfig() {
  const m = guide.match(/```json\n(\{\s*"mcpServers"[\s\S]*?)\n```/);
  assert.ok(m, 'docs/hosts.md has no settings.json snippet with mcpServers');
  const hub = JSON.parse(m[1]).mcpServers.hub;
  assert.ok(hub?.command, `the snippet's mcpServers.hub has no command: ${m[1]}`);
  return hub;
}

// fill replaces the placeholders a user fills in.
function fill(config, token) {
  const env = {};
  for (const [k, v] of Object.entries(config.env ?? {})) {
    env[k] = v.replace('<token>', token).replace(DEFAULT_ADDR, hubAddr());
  }
  return { ...config, env };
}

function hubAddr() {
  return env('HUB_ADDR');
}

async function startHost(config, name) {
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args ?? [],
    env: {
      ...getDefaultEnvironment(),
      PATH: `${path.dirname(env('HUB_BIN'))}${path.delimiter}${process.env.PATH}`,
      ...config.env,
    },
    stderr: 'inherit',
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function wakeUp(waiter, poster, waiterName, body, options) {
  const peek = await waiter.callTool({ name: 'wait_for_messages', arguments: { timeout_seconds: 0 } }, undefined, options);
  assert.ok(!peek.isError, JSON.stringify(peek.content));
  const waiting = waiter.callTool(
    { name: 'wait_for_messages', arguments: { after: peek.structuredContent.cursor, timeout_seconds: 30 } },
    undefined, options,
  );
  await new Promise((r) => setTimeout(r, 500)); // let the waiter park
  const sent = await poster.callTool({ name: 'post_message', arguments: { to: [waiterName], body } }, undefined, options);
  assert.ok(!sent.isError, JSON.stringify(sent.content));
  const res = await waiting;
  assert.ok(!res.isError, JSON.stringify(res.content));
  const out = res.structuredContent;
  assert.equal(out.timed_out, false, JSON.stringify(out));
  assert.ok(out.messages.some((m) => m.id === sent.structuredContent.id && m.body === body), JSON.stringify(out));
  // Hosts that show the model only the text must see the message too.
  assert.ok(res.content[0].text.includes(body), `wake-up text lacks the message: ${res.content[0].text}`);
}

test('hub mcp started as docs/hosts.md configures Claude Code and Gemini CLI', async () => {
  const claude = fill(claudeConfig(), env('TOKEN_D'));
  const gemini = fill(geminiConfig(), env('TOKEN_E'));
  for (const c of [claude, gemini]) {
    assert.ok(c.env.HUB_TOKEN && !c.env.HUB_TOKEN.includes('<'), `HUB_TOKEN not filled in: ${JSON.stringify(c.env)}`);
  }
  const [d, e] = await Promise.all([startHost(claude, 'claude-code-config'), startHost(gemini, 'gemini-cli-config')]);
  try {
    const options = { timeout: gemini.timeout }; // the request time-out the snippet sets
    for (const [host, agent] of [[d, env('AGENT_D')], [e, env('AGENT_E')]]) {
      const { tools } = await host.listTools();
      const names = tools.map((t) => t.name);
      for (const want of ['heartbeat', 'wait_for_messages', 'post_message', 'list_agents']) {
        assert.ok(names.includes(want), `tools/list lacks ${want}: ${names}`);
      }
      const st = await host.callTool({ name: 'check_hub_status', arguments: {} });
      assert.equal(st.structuredContent?.agent, agent, JSON.stringify(st.content));
    }
    await wakeUp(d, e, env('AGENT_D'), 'ping from the Gemini CLI config', options);
    await wakeUp(e, d, env('AGENT_E'), 'pong from the Claude Code config', options);
    console.log('# docs/hosts.md configs: both hosts listed the tools and woke with the other\'s message');
  } finally {
    await Promise.all([d.close(), e.close()]);
  }
});
