import ParleyCore

extension Settings {
    /// Whom an admin's add makes a member at once.
    func roomAddPolicy() throws -> RoomAddPolicy {
        let key = SettingKeys.Messages.roomAddPolicy
        guard let policy = RoomAddPolicy(rawValue: try required(string(key), key)) else {
            throw SettingsError.invalid(key, expected: "anyone or invite")
        }
        return policy
    }

    /// The most members a room may have for its messages' receipts.
    func receiptsMaxMembers() throws -> Int {
        let key = SettingKeys.Messages.receiptsMaxMembers
        return try required(int(key, in: MessageReceipts.maxMembersRange), key)
    }

    /// How long after sending a message may be edited; zero: always.
    func messageEditWindow() throws -> Duration {
        try seconds(SettingKeys.Messages.editWindow) ?? .zero
    }
}

extension Settings {
    /// Days messages are kept where a room sets none; nil: kept.
    func retentionDefaultDays() throws -> Int? {
        try int(SettingKeys.Messages.retentionDefaultDays, in: ErasureService.retentionDays)
    }

    /// How many days finished webhook deliveries and audit entries are kept.
    func logRetentionDays() throws -> (deliveries: Int, audit: Int) {
        typealias K = SettingKeys.Messages
        return (
            try required(int(K.deliveryRetentionDays, in: 1...36_500), K.deliveryRetentionDays),
            try required(int(K.auditRetentionDays, in: 1...36_500), K.auditRetentionDays)
        )
    }

    func maintenanceInterval() throws -> Duration {
        try positiveSeconds(SettingKeys.Messages.maintenanceInterval)
    }
}

extension Settings {
    /// The limits against abuse in rooms, per user.
    func abuseLimits() throws -> AbuseLimits {
        typealias K = SettingKeys.Limits
        func bucket(_ rateKey: SettingKey, _ burstKey: SettingKey) throws -> RateBucket {
            let perSecond = try required(string(rateKey), rateKey)
            guard let rate = Double(perSecond), rate > 0, rate <= 1_000_000 else {
                throw SettingsError.invalid(rateKey, expected: "a number of messages per second above 0")
            }
            return RateBucket(perSecond: rate, burst: try required(int(burstKey, in: 1...1_000_000), burstKey))
        }
        return AbuseLimits(
            messages: try bucket(K.messagesPerSecond, K.messagesBurst),
            roomsPerHour: try required(int(K.roomsPerHour, in: 1...1_000_000), K.roomsPerHour),
            membersPerRequest: try required(int(K.membersPerRequest, in: 2...1_000_000), K.membersPerRequest),
            membersPerHour: try required(int(K.membersPerHour, in: 1...100_000_000), K.membersPerHour),
            uploadsPerDay: try required(int(K.uploadsPerDay, in: 1...100_000_000), K.uploadsPerDay),
            storageQuotaBytes: Int64(try required(int(K.storageQuota, in: 1...Int.max), K.storageQuota)),
            botMessages: try bucket(K.botMessagesPerSecond, K.botMessagesBurst))
    }
}
