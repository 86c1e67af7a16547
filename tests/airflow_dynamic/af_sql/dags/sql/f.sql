insert into mart.fromfile select * from raw.s
