// Loader hook behind register-tfjs.mjs: bundler-style resolution (".js", "/index.js") for relative imports made by
// files of @tensorflow packages. Every other import resolves exactly as Node resolves it.

const TFJS = '/node_modules/@tensorflow/';

export async function resolve(specifier, context, nextResolve) {
  const fromTfjs = context.parentURL?.includes(TFJS) && (specifier.startsWith('./') || specifier.startsWith('../'));
  if (!fromTfjs || specifier.endsWith('.js')) return nextResolve(specifier, context);
  try {
    return await nextResolve(specifier, context);
  } catch (e) {
    if (e?.code !== 'ERR_UNSUPPORTED_DIR_IMPORT' && e?.code !== 'ERR_MODULE_NOT_FOUND') throw e;
    try {
      return await nextResolve(`${specifier}.js`, context);
    } catch {
      return nextResolve(`${specifier}/index.js`, context);
    }
  }
}
