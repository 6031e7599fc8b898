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

    func maintenanceInterval() throws -> Duration {
        try positiveSeconds(SettingKeys.Messages.maintenanceInterval)
    }
}
