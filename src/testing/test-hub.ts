// The hub endpoint every test gets unless it sets its own (vite.config.ts puts it in HF_ENDPOINT): a closed port
// on this machine, so a hub id given without an endpoint fails at once, naming the host. Constants only: the build
// config imports it.

/** Nothing listens there (a port below 1024 that nothing here binds, and not one fetch refuses outright). */
export const TEST_HUB_ENDPOINT = 'http://127.0.0.1:2';
