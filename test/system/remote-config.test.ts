// Remote configuration through interface B's command/sync/send against the emulator: get, check,
// apply, confirm, rollback (asked and automatic), history, and a restart in the middle.
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from './harness.js';
import { meter, RemoteRig } from './remote-config-rig.js';

describe('remote configuration through the cloud', () => {
  let rig: RemoteRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  const withMeter2 = (text: string) => text.replace('devices:\n', `devices:\n${meter('meter-2', 2, '{{secret-2}}')}\n`);

  async function online(r: RemoteRig, device: string): Promise<void> {
    await waitFor(() => (r.gateway?.status().devices.find((d) => d.name === device)?.online ? true : undefined), 20_000);
  }

  it('gets the running site with placeholders, applies a change awaiting confirmation, runs it after site_confirm, and lists it', async () => {
    rig = await RemoteRig.start();
    await online(rig, 'meter-1');
    const got = await rig.command('site_get');
    // The identity's and meter-1's tokens and the project key.
    expect(got).toMatchObject({ generation: 1, state: 'confirmed', secrets: 3 });
    expect(got.text).not.toContain('demo-project-key');
    expect(got.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(got.text).not.toContain('demo-meter-1-token');
    expect(got.text).not.toContain('demo-gateway-token');
    expect(got.text).toContain('accessToken: {{secret-');
    // meter-2's token is new: written out; meter-1's stays a placeholder.
    const edited = (got.text as string).replace('devices:\n', `devices:\n${meter('meter-2', 2, 'demo-meter-2-token')}\n`);
    const check = await rig.command('site_check', { text: edited });
    expect(check).toMatchObject({ valid: true, plan: { devicesAdded: ['meter-2'], devicesChanged: [], devicesRemoved: [] } });
    const applied = await rig.command('site_apply', { text: edited, baseDigest: got.digest, confirmWithinS: 60 });
    expect(applied).toMatchObject({ outcome: 'awaiting_confirm', generation: 2, mustComeUp: { buses: [], links: ['meter-2'] } });
    await online(rig, 'meter-2');
    await waitFor(async () => ((await rig!.command('site_confirm')).outcome === 'confirmed' ? true : undefined), 20_000);
    expect(rig.gateway?.status().config?.site).toMatchObject({ generation: 2, state: 'confirmed' });
    const history = await rig.command('site_history');
    expect(history).toMatchObject({ running: 2, generations: [{ generation: 2, via: 'remote', outcome: 'confirmed' }, { generation: 1, via: 'seed', outcome: 'confirmed' }] });
    // The cloud reads the generation in fieldgate's own attributes.
    await waitFor(async () => ((await rig!.ownAttributes()).site_generation === 2 ? true : undefined), 20_000);
  }, 90_000);

  it('refuses an apply against a stale digest, and rolls an unconfirmed apply back by itself; site_history shows why', async () => {
    rig = await RemoteRig.start();
    await online(rig, 'meter-1');
    const got = await rig.command('site_get');
    const edited = (got.text as string).replace('pollIntervalMs: 300', 'pollIntervalMs: 700');
    const stale = await rig.command('site_apply', { text: edited, baseDigest: '0'.repeat(64), confirmWithinS: 5 });
    expect(stale).toMatchObject({ outcome: 'refused', problems: [{ path: 'site', message: expect.stringContaining('baseDigest is not the running site') }] });
    const applied = await rig.command('site_apply', { text: edited, baseDigest: got.digest, confirmWithinS: 5 });
    expect(applied).toMatchObject({ outcome: 'awaiting_confirm', generation: 2 });
    const history = await waitFor(async () => {
      const h = await rig!.command('site_history');
      return h.running === 1 ? h : undefined;
    }, 30_000);
    expect(history.generations).toMatchObject([{ generation: 2, outcome: 'rolled_back', reason: 'not confirmed within 5 s' }, { generation: 1, running: true }]);
    expect(rig.gateway?.status().devices[0]).toMatchObject({ name: 'meter-1' });
    expect((await rig.command('site_get')).digest).toBe(got.digest);
    // Confirming now is refused with the reason.
    const late = await rig.command('site_confirm');
    expect(late).toMatchObject({ outcome: 'refused', problems: [{ message: expect.stringContaining('generation 2 was rolled back (not confirmed within 5 s)') }] });
    await waitFor(async () => (String((await rig!.ownAttributes()).site_rollback).includes('generation 2 rolled back to 1') ? true : undefined), 20_000);
  }, 90_000);

  it('an apply that breaks a bus cannot be confirmed and rolls back at the end of its window', async () => {
    rig = await RemoteRig.start();
    await online(rig, 'meter-1');
    const got = await rig.command('site_get');
    // A closed port: the bus never comes up.
    const broken = (got.text as string).replace(/port: \d+, timeoutMs/, 'port: 9, timeoutMs');
    const applied = await rig.command('site_apply', { text: broken, baseDigest: got.digest, confirmWithinS: 6 });
    expect(applied).toMatchObject({ outcome: 'awaiting_confirm', mustComeUp: { buses: ['plant'] } });
    const confirm = await rig.command('site_confirm');
    expect(confirm).toMatchObject({ outcome: 'refused', problems: [{ message: expect.stringContaining('not up yet: bus plant') }] });
    const history = await waitFor(async () => {
      const h = await rig!.command('site_history');
      return h.running === 1 ? h : undefined;
    }, 30_000);
    expect(history.generations).toMatchObject([{ generation: 2, outcome: 'rolled_back', reason: 'not confirmed within 6 s; not up: bus plant' }, { generation: 1 }]);
    await online(rig, 'meter-1');
  }, 90_000);

  it('a restart runs the last confirmed generation; one awaiting confirmation at the stop is rolled back at start', async () => {
    rig = await RemoteRig.start();
    await online(rig, 'meter-1');
    let got = await rig.command('site_get');
    const two = withMeter2(got.text as string).replace('{{secret-2}}', 'demo-meter-2-token');
    expect(await rig.command('site_apply', { text: two, baseDigest: got.digest, confirmWithinS: 0 })).toMatchObject({ outcome: 'applied', generation: 2 });
    await rig.stopGateway();
    await rig.startGateway();
    expect(rig.gateway?.status().devices.map((d) => d.name)).toEqual(['meter-2', 'meter-1']);
    got = await rig.command('site_get');
    expect(got).toMatchObject({ generation: 2, state: 'confirmed', reason: expect.stringContaining('generation 2, the last confirmed') });
    const three = (got.text as string).replace('pollIntervalMs: 300', 'pollIntervalMs: 900');
    expect(await rig.command('site_apply', { text: three, baseDigest: got.digest, confirmWithinS: 600 })).toMatchObject({ outcome: 'awaiting_confirm', generation: 3 });
    // Stopped inside the window (a crash leaves the same book on disk).
    await rig.stopGateway();
    await rig.startGateway();
    got = await rig.command('site_get');
    expect(got).toMatchObject({ generation: 2, state: 'confirmed', reason: expect.stringContaining('generation 3 awaited confirmation when fieldgate stopped') });
    expect(await rig.command('site_history')).toMatchObject({ generations: [{ generation: 3, outcome: 'rolled_back', reason: 'fieldgate restarted while it awaited confirmation' }, { generation: 2, running: true }, { generation: 1 }] });
  }, 120_000);
});

describe('remote configuration when the cloud link drops mid-apply', () => {
  it('the apply completes whole; after the reconnect the cloud reads its state and confirms it', async () => {
    const { connectAsync } = await import('mqtt');
    const { PROJECT_KEY, deviceApi } = await import('./harness.js');
    const rig = await RemoteRig.start();
    try {
      await waitFor(() => (rig.gateway?.status().devices[0]?.online ? true : undefined), 20_000);
      const got = await rig.command('site_get');
      const edited = (got.text as string).replace('pollIntervalMs: 300', 'pollIntervalMs: 600');
      const reconnectsBefore = rig.gateway!.status().links.find((l) => l.device === '@fieldgate')!.reconnects;
      // Sent without waiting for the reply; another client with the identity's credential then
      // takes the session over, which drops fieldgate's link (the reply may be lost with it).
      await deviceApi(rig.site, 'demo-gateway-token', 'POST', '/command/send', { method: 'site_apply', params: { text: edited, baseDigest: got.digest, confirmWithinS: 60 }, id: 77 });
      const intruder = await connectAsync(`mqtt://127.0.0.1:${rig.site.emulator.mqttPort}`, { clientId: 'dev-fieldgate', username: 'demo-gateway-token', password: PROJECT_KEY, reconnectPeriod: 0, connectTimeout: 5000 });
      await intruder.endAsync();
      await waitFor(() => {
        const link = rig.gateway!.status().links.find((l) => l.device === '@fieldgate')!;
        return link.reconnects > reconnectsBefore && link.state === 'up' ? true : undefined;
      }, 30_000);
      const now = await waitFor(async () => {
        const g = await rig.command('site_get');
        return g.generation === 2 ? g : undefined;
      }, 20_000);
      expect(now).toMatchObject({ state: 'awaiting_confirm', text: expect.stringContaining('pollIntervalMs: 600') });
      expect(rig.gateway!.status().devices[0]).toMatchObject({ name: 'meter-1' });
      await waitFor(async () => ((await rig.command('site_confirm')).outcome === 'confirmed' ? true : undefined), 20_000);
      expect(await rig.command('site_history')).toMatchObject({ running: 2, generations: [{ generation: 2, outcome: 'confirmed' }, { generation: 1 }] });
    } finally {
      await rig.close();
    }
  }, 90_000);
});
