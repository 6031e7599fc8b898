-- Logs kept for a number of days and purged by the maintenance sweep, oldest first:
-- finished webhook deliveries (PARLEY_WEBHOOK_DELIVERY_RETENTION_DAYS) and the audit log
-- (PARLEY_AUDIT_RETENTION_DAYS).
CREATE INDEX webhook_delivery_finished_idx ON cloud.webhook_delivery (created_at) WHERE status <> 'pending';
CREATE INDEX audit_entry_at_idx ON cloud.audit_entry (at);
