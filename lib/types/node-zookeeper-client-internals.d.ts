// The two internal files of node-zookeeper-client that zookeeper-client.adapter.ts reaches into. They are typed
// there (and checked at connect), so here they are only declared to exist. Imported rather than `require`d so the
// same source builds as ES modules and as CommonJS (docs/getting-started.md, "Supported versions").
declare module 'node-zookeeper-client/lib/jute/index.js' {
  const jute: unknown;
  export default jute;
}
declare module 'node-zookeeper-client/lib/Exception.js' {
  const exception: unknown;
  export default exception;
}
