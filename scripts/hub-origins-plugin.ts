// The Vite plugin that puts the hub origins (src/schema/hub-origins.ts) into the page: into index.html's
// Content-Security-Policy (connect-src), and into the bundle as __RL_LAB_EXTRA_HUB_ORIGINS__ for pageHubSources(),
// so the CSP the browser enforces and the origin check the page shows are one list. RL_LAB_EXTRA_HUB_ORIGINS
// (comma-separated http(s) origins) adds a mirror's or the tests' mock hub; a bad entry fails the build, named.
// RL_LAB_HUB_TIMEOUT (seconds, SETTINGS.hub_timeout) goes into the bundle as __RL_LAB_HUB_TRANSFER__ for the engine
// worker's transfer policy (the e2e build uses 2 s so a stalled download is cut in seconds); a bad value fails too.

import type { Plugin } from 'vite';
import {
  EXTRA_HUB_ORIGINS_VAR,
  HUB_TIMEOUT_VAR,
  hubConnectSources,
  parseExtraHubOrigins,
  withHubConnectSources,
} from '../src/schema/hub-origins';
import { transferOfTimeoutSetting } from '../src/hub/download';

export function hubOriginsPlugin(env: Record<string, string | undefined> = process.env): Plugin {
  const extra = parseExtraHubOrigins(env[EXTRA_HUB_ORIGINS_VAR]);
  const sources = hubConnectSources(extra);
  const transfer = transferOfTimeoutSetting(env[HUB_TIMEOUT_VAR], HUB_TIMEOUT_VAR);
  return {
    name: 'hub-origins',
    config: () => ({
      define: {
        __RL_LAB_EXTRA_HUB_ORIGINS__: JSON.stringify(extra),
        __RL_LAB_HUB_TRANSFER__: JSON.stringify(transfer),
      },
    }),
    transformIndexHtml: { order: 'pre', handler: (html: string) => withHubConnectSources(html, sources) },
  };
}
