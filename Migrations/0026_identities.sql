-- The accounts of trusted issuers (PARLEY_AUTH_ISSUERS_FILE) that sign in by token exchange:
-- an issuer's user (its `sub`) is one Parley user. A Parley user holds at most one subject per
-- issuer; a password account is linked to an issuer's user only by the rule of
-- IdentityProvisioning (a verified e-mail and PARLEY_AUTH_LINK_VERIFIED_EMAIL=on).
CREATE TABLE cloud.user_identity (
    issuer          text        NOT NULL CHECK (length(issuer) BETWEEN 1 AND 2048),
    subject         text        NOT NULL CHECK (length(subject) BETWEEN 1 AND 255),
    user_account_id bigint      NOT NULL REFERENCES cloud.user_account (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT user_identity_subject_key UNIQUE (issuer, subject),
    -- Also the index of the foreign key.
    CONSTRAINT user_identity_user_issuer_key UNIQUE (user_account_id, issuer)
);
