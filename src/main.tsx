// Page entry: starts the engine worker first, so that its script and the GPU device load while the app's own
// bundle does, and asks it for the run the opening lesson prepares (its pipelines compile and its first step
// trains meanwhile: the app, once rendered, asks for the same run and finds it); then loads and mounts the app
// (mount.tsx).
import { startEngineWorker, prepareEarly } from './worker/client';

startEngineWorker(location.search);
void import('./lessons/opening').then(({ openingLessonRunConfig }) => {
  const config = openingLessonRunConfig(location.search);
  if (config) prepareEarly(config);
});
void import('./mount');
