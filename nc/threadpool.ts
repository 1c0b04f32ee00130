/**
 * Imported first by nc/main.ts, before anything queues work on libuv's thread pool (which reads
 * UV_THREADPOOL_SIZE once, when first used). The libvirt driver runs its blocking calls as koffi
 * async calls on that pool, and each outgoing live migration holds one pool thread for its whole
 * duration; with Node's default of 4, two migrations would leave the NC's own file I/O (its store's
 * fsyncs) two threads. An operator's own UV_THREADPOOL_SIZE wins.
 */
export const NC_THREADPOOL_SIZE = 16;

process.env.UV_THREADPOOL_SIZE ??= String(NC_THREADPOOL_SIZE);
