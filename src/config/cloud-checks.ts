// Cross-checks between the gateway's cloud settings and the devices' cloud identities (pure).
// Secrets (project key, access and secret keys) are not required here: they usually come from the
// environment of the service, and a missing one is reported when the credential is fetched.
import type { ConfigIssue, GatewaySettings, SiteConfig } from './site-types.js';

export function checkCloudIdentities(gateway: GatewaySettings, site: SiteConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const cloud = gateway.cloud;
  const withCloud = site.devices.filter((d) => d.cloud);
  if (withCloud.length > 0 && !cloud.mqttUrl) {
    issues.push({ path: 'gateway.cloud.mqttUrl', message: `required: ${withCloud.length} device(s) have a cloud block` });
  }
  site.devices.forEach((device, index) => {
    const c = device.cloud;
    if (!c || c.accessToken !== undefined) return;
    const path = `devices[${index}].cloud`;
    if (!cloud.apiBaseUrl) {
      issues.push({ path, message: 'fetching the credential (no accessToken) needs gateway.cloud.apiBaseUrl' });
    } else if ((c.deviceId !== undefined || c.allowCreate) && c.deviceKey === undefined && !cloud.appId) {
      issues.push({ path, message: 'fetching the credential through interface A needs gateway.cloud.appId (and the access and secret keys)' });
    }
  });
  return issues;
}
