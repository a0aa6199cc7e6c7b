// Stands in for the `webgpu` package in the fast test tier (vite.config.ts aliases it there): a fast test that
// reaches for Dawn fails at once with this message instead of quietly acquiring a device.
throw new Error(
  'the fast test tier has no WebGPU device: this test file acquires one, so src/testing/tiers.ts must classify it as slow',
);
