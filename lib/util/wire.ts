/**
 * What JSON makes of a type on the wire: a Date becomes its ISO string, an undefined field is absent (optional).
 * One set of types on both sides: the console's page reads `Wire<ConsoleJobsPage>`, a service hearing the events
 * through a transport takes `@Payload() event: Wire<ItemCompletedEvent>`. @publicApi
 */
export type Wire<T> = T extends Date
  ? string
  : T extends ReadonlyArray<infer U>
    ? Array<Wire<U>>
    : T extends object
      ? OneObject<
          { [K in keyof T as undefined extends T[K] ? never : K]: Wire<T[K]> } & {
            [K in keyof T as undefined extends T[K] ? K : never]?: Wire<Exclude<T[K], undefined>>;
          }
        >
      : T;

/** An intersection of object types as one object type (as the editor shows it, and as equality compares it). */
type OneObject<T> = { [K in keyof T]: T[K] };
