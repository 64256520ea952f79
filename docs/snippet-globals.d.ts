// The names the documentation's examples leave to the reader (an app's own services and data), declared so that
// every ```ts block of the docs type-checks against the library (tools/check-docs.mjs). Not part of the package.

declare function buildReport(region: string, options: { signal: AbortSignal }): Promise<void>;

interface Order {
  id: string;
}
declare class OrderRepository {
  pending(query: { shard: number; of: number; limit: number }): Promise<Order[]>;
  sync(orders: Order[]): Promise<void>;
}
declare class AlertService {
  send(message: string): Promise<void>;
}
declare class CacheService {
  freeze(items: readonly number[]): Promise<void>;
  thaw(items: readonly number[]): Promise<void>;
}
declare class MailService {
  send(message: string): Promise<void>;
}

interface Invoice {
  id: string;
}
declare class InvoiceRepository {
  pendingInShard(item: number, of: number): Promise<Invoice[]>;
}
declare class Mailer {
  send(invoice: Invoice, options: { signal: AbortSignal; idempotencyKey: string }): Promise<void>;
}
interface Tenant {
  id: string;
  cron: string;
}
declare class Exporter {
  run(tenant: Tenant, item: number): Promise<void>;
}
/** A job provider of the app, as in the README's example. */
declare class ReportJob {}
declare class RegionReportJob {}

// @nestjs/config, as far as the examples use it (the library does not depend on it).
declare module '@nestjs/config' {
  export class ConfigModule {}
  export class ConfigService {
    getOrThrow<T = string>(key: string): T;
  }
}
