// A real hub process for the browser tests: the binary given in HUB_BIN,
// fresh data dir, free loopback ports, short health thresholds and ticks.
// With HUB_FLEET=N the hub also holds N more agents (seedFleet), each in
// strict deep work and online for the whole run, so that the tests' own
// agents sort before them and the page holds, sorts and pages N rows.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

export class Hub {
  constructor() {
    this.bin = process.env.HUB_BIN;
    if (!this.bin) throw new Error('set HUB_BIN to the hub binary (scripts/ci-browser.sh does)');
    this.dataDir = mkdtempSync(join(tmpdir(), 'hub-browser-'));
    this.log = '';
    this.fleet = Number(process.env.HUB_FLEET || 0);
  }

  async start() {
    if (!this.httpPort) {
      this.httpPort = await freePort();
      this.grpcPort = await freePort();
    }
    this.origin = `http://127.0.0.1:${this.httpPort}`;
    this.proc = spawn(this.bin, [
      '--data-dir', this.dataDir,
      '--grpc-addr', `127.0.0.1:${this.grpcPort}`,
      '--http-addr', `127.0.0.1:${this.httpPort}`,
      '--tick-interval', '500ms',
      '--inactivity-warning', '4s', '--inactivity-anomaly', '8s', '--inactivity-timeout', '1h',
      // A fleet's agents make one call: they stay online for the run.
      ...(this.fleet ? ['--idle-after', '1h', '--offline-after', '2h'] : ['--idle-after', '30s', '--offline-after', '2m']),
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise((resolve) => this.proc.on('exit', resolve));
    this.exited = exited;
    await new Promise((resolve, reject) => {
      const onData = (b) => {
        this.log += b.toString();
        if (this.log.includes('dashboard: open')) resolve();
      };
      this.proc.stdout.on('data', onData);
      this.proc.stderr.on('data', onData);
      exited.then((code) => reject(new Error(`hub exited (${code}) before serving:\n${this.log}`)));
    });
    this.adminToken = readFileSync(join(this.dataDir, 'admin.token'), 'utf8').trim();
  }

  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return;
    this.proc.kill('SIGTERM');
    await this.exited;
  }

  // rest calls the REST API with a token and returns the JSON answer.
  async rest(method, path, token, body) {
    const res = await fetch(this.origin + path, {
      method,
      headers: { Authorization: 'Bearer ' + token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = await res.json();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
    return data;
  }

  admin(method, path, body) { return this.rest(method, path, this.adminToken, body); }

  // seedFleet creates n agents named zz-fleet-00001 … (after the tests'
  // own agents by name), each declaring two hours of strict deep work (no
  // health check fires, and the call makes it online), conc calls at a
  // time. It returns how long it took in ms.
  async seedFleet(n, conc = 32) {
    const t0 = Date.now();
    let next = 0;
    const worker = async () => {
      while (next < n) {
        const name = `zz-fleet-${String(++next).padStart(5, '0')}`;
        const r = await this.admin('POST', '/v1/admin/agents', { name, role: 'fleet' });
        await this.rest('POST', '/v1/deep-work', r.token, { mode: 'strict', planned_activity: 'background work', planned_minutes: 120 });
      }
    };
    await Promise.all(Array.from({ length: conc }, worker));
    return Date.now() - t0;
  }

  // agent creates an agent and returns a client acting as it over REST.
  async agent(name, role = '') {
    const r = await this.admin('POST', '/v1/admin/agents', { name, role });
    const tok = r.token;
    return {
      name,
      token: tok,
      call: (method, path, body) => this.rest(method, path, tok, body),
    };
  }
}
