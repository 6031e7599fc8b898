import Foundation

/// The keys of rooms and messages: editing, retention, maintenance, logs kept, and the limits
/// against abuse.
extension SettingKeys {
    enum Messages {
        static let editWindow = SettingKey(
            "message.editWindow", default: "0",
            "Seconds after sending during which a message may be edited (0: no limit); later edits get 403.")
        static let retentionDefaultDays = SettingKey(
            "retention.defaultDays",
            "Days after which messages are purged in rooms that set no retention of their own (unset: kept).")
        static let maintenanceInterval = SettingKey(
            "maintenance.interval", default: "300",
            "Seconds between the maintenance role's passes (retention purge, expired exports).")
        static let roomAddPolicy = SettingKey(
            "room.addPolicy", default: "anyone",
            "Whom an admin's add makes a member at once: anyone (but someone who left, who is invited) or invite "
                + "(only people who share a room with the adder; anyone else is invited, 202).")
        static let deliveryRetentionDays = SettingKey(
            "webhook.deliveryRetentionDays", default: "30",
            "Days finished webhook deliveries (and bots' commands), with their attempts, are kept and listed.")
        static let auditRetentionDays = SettingKey(
            "audit.retentionDays", default: "365", "Days entries of the audit log (GET /v1/admin/audit) are kept.")
        static let receiptsMaxMembers = SettingKey(
            "receipts.maxMembers", default: "100",
            "Rooms of up to this many members carry each message's receipts {delivered, read} in history and "
                + "in its event (0 to 1000; 0: none); larger rooms have receipts null.")
        static let all = [
            editWindow, retentionDefaultDays, maintenanceInterval, roomAddPolicy, deliveryRetentionDays,
            auditRetentionDays, receiptsMaxMembers,
        ]
    }

    /// Limits against abuse, per user.
    enum Limits {
        static let messagesPerSecond = SettingKey(
            "limit.messagesPerSecond", default: "10",
            "Messages a user may send per second, REST and chat-in together, once the burst is spent "
                + "(429 with Retry-After, or message-rejected rate-limited with retryAfter).")
        static let messagesBurst = SettingKey(
            "limit.messagesBurst", default: "30", "Messages a user may send at once before the rate applies.")
        static let botMessagesPerSecond = SettingKey(
            "limit.botMessagesPerSecond", default: "50",
            "Messages a bot may send per second (its key's sends and its chat-in) once its burst is spent.")
        static let botMessagesBurst = SettingKey(
            "limit.botMessagesBurst", default: "100", "Messages a bot may send at once before its rate applies.")
        static let roomsPerHour = SettingKey(
            "limit.roomsPerHour", default: "20", "Multiparty rooms a user may create per hour.")
        static let membersPerRequest = SettingKey(
            "limit.membersPerRequest", default: "1000",
            "Users one request may add (a new room's members); more is 400 before any is looked up.")
        static let membersPerHour = SettingKey(
            "limit.membersPerHour", default: "2000", "Users one user may add to rooms per hour, in all.")
        static let uploadsPerDay = SettingKey(
            "limit.uploadsPerDay", default: "500", "Uploads a user may start per day (429 beyond).")
        static let storageQuota = SettingKey(
            "storage.quotaBytes", default: "5368709120",
            "Bytes of a user's uploads kept at once (5 GiB); an upload beyond gets 413 quota-exceeded.")
        static let all = [
            messagesPerSecond, messagesBurst, botMessagesPerSecond, botMessagesBurst, roomsPerHour,
            membersPerRequest, membersPerHour, uploadsPerDay, storageQuota,
        ]
    }
}
