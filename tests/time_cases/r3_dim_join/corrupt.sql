update raw.users set region = 'APAC' where user_id = 3;
