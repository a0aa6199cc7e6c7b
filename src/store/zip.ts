// The zip writer the page uses to save an exported folder as one download (ui/Downloads.tsx): io/zip.ts, pure,
// re-exported here because the UI imports values only through the store.
export { zipChunks } from '../io/zip';
