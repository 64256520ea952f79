import { CURATOR_RECIPES_JAR, ZOOKEEPER_JAR } from '../../lib/devtools/local-zookeeper.js';

/** Debian libyaml-snake-java and libquartz2-java: what a Java ElasticJob instance reads its config and crons with. */
export const SNAKEYAML_JAR = '/usr/share/java/snakeyaml.jar';
export const QUARTZ_JAR = '/usr/share/java/quartz2.jar';

/** Where test/support/global-setup.ts compiles the Java peers of test/java/, once per run. */
export const JAVA_CLASSES = 'build/java';

/** Every jar a Java peer of test/java/ compiles and runs against. */
export const JAVA_PEER_JARS = [SNAKEYAML_JAR, QUARTZ_JAR, CURATOR_RECIPES_JAR, ZOOKEEPER_JAR];

/**
 * Short-lived test JVMs: the C1 compiler only and the serial collector, as LocalZookeeper's `fastStart`. C2's and
 * G1's threads cost more CPU than they save in a JVM that lives seconds, on two cores shared by the whole suite.
 */
export const FAST_JVM = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

/**
 * The `java` arguments that run a peer of test/java/ (its class name, e.g. `CuratorLatchPeer`) from the classes the
 * global setup compiled. `java File.java` (the source launcher) compiled the file again at every launch: about
 * 2.5 CPU-seconds each, against 0.2 for the compiled class.
 */
export function javaPeer(className: string, args: readonly string[] = []): string[] {
  return [...FAST_JVM, '-cp', [JAVA_CLASSES, ...JAVA_PEER_JARS].join(':'), className, ...args];
}

/** `javac` arguments compiling every peer of test/java/ into JAVA_CLASSES (test/support/global-setup.ts). */
export function javacArguments(sources: readonly string[]): string[] {
  return [...FAST_JVM.map((flag) => `-J${flag}`), '-d', JAVA_CLASSES, '-cp', JAVA_PEER_JARS.join(':'), ...sources];
}
