// Page entry: starts the engine worker first, so that its script and the GPU device load while the app's own
// bundle does (the app asks for the device only once React has rendered), then loads and mounts the app (mount.tsx).
import { startEngineWorker } from './worker/client';

startEngineWorker(location.search);
void import('./mount');
