-- The messenger application and its three hierarchical room roles (source §4.1.1).
INSERT INTO cloud.app (code, name) VALUES ('messenger', 'Messenger');

INSERT INTO cloud.role (app_id, code, name, rank)
SELECT app.id, role.code, role.name, role.rank
FROM cloud.app
CROSS JOIN (VALUES ('reader', 'Reader', 1), ('writer', 'Writer', 2), ('admin', 'Admin', 3))
    AS role (code, name, rank)
WHERE app.code = 'messenger';
