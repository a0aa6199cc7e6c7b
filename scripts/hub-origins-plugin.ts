// The Vite plugin that puts the hub origins (src/schema/hub-origins.ts) into the page: into index.html's
// Content-Security-Policy (connect-src), and into the bundle as __RL_LAB_EXTRA_HUB_ORIGINS__ for pageHubSources(),
// so the CSP the browser enforces and the origin check the page shows are one list. RL_LAB_EXTRA_HUB_ORIGINS
// (comma-separated http(s) origins) adds a mirror's or the tests' mock hub; a bad entry fails the build, named.

import type { Plugin } from 'vite';
import {
  EXTRA_HUB_ORIGINS_VAR,
  hubConnectSources,
  parseExtraHubOrigins,
  withHubConnectSources,
} from '../src/schema/hub-origins';

export function hubOriginsPlugin(env: Record<string, string | undefined> = process.env): Plugin {
  const extra = parseExtraHubOrigins(env[EXTRA_HUB_ORIGINS_VAR]);
  const sources = hubConnectSources(extra);
  return {
    name: 'hub-origins',
    config: () => ({ define: { __RL_LAB_EXTRA_HUB_ORIGINS__: JSON.stringify(extra) } }),
    transformIndexHtml: { order: 'pre', handler: (html: string) => withHubConnectSources(html, sources) },
  };
}
