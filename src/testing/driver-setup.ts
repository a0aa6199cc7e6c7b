// A Vitest setup file of the projects that name a Vulkan driver (vite.config.ts: RL_LAB_TEST_DRIVER): before any
// test of a file, points the process at that driver and checks that a device acquired on it is that driver, so a
// file that acquires its own devices (acquireNodeDevice) cannot run on another driver unnoticed. A missing driver
// fails every test of the file with the fix in the message.

import { beforeAll } from 'vitest';
import { describeAdapter } from '../gpu';
import { acquireTestDevice, requestedTestDriver } from './test-device';

beforeAll(async () => {
  const driver = requestedTestDriver();
  if (!driver) return;
  const ctx = await acquireTestDevice();
  console.log(`driver ${driver}: ${describeAdapter(ctx.report)}`);
  ctx.destroy();
});
