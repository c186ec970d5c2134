//! Alarms raised on members (etcd's `NOSPACE` and `CORRUPT`): replicated
//! like any write, kept in the `meta` table, and consulted by the write path
//! (with `NOSPACE` active, writes that add data are refused).

use std::collections::BTreeSet;

use rtcd_proto::etcdserverpb::{AlarmMember, AlarmType};

use crate::engine::{Engine, Table};
use crate::error::StoreError;

const PREFIX: &[u8] = b"alarm/";

/// The active alarms: (member ID, alarm type).
#[derive(Debug, Default, Clone)]
pub struct Alarms {
    active: BTreeSet<(u64, i32)>,
}

impl Alarms {
    pub fn load(engine: &dyn Engine) -> Result<Self, StoreError> {
        let mut active = BTreeSet::new();
        let mut end = PREFIX.to_vec();
        end.push(0xff);
        for entry in engine.scan(Table::Meta, PREFIX, Some(&end)) {
            let (key, _) = entry?;
            active.insert(decode(&key)?);
        }
        Ok(Self { active })
    }

    pub fn activate(&mut self, member: u64, alarm: i32) -> bool {
        self.active.insert((member, alarm))
    }

    pub fn deactivate(&mut self, member: u64, alarm: i32) -> bool {
        self.active.remove(&(member, alarm))
    }

    pub fn no_space(&self) -> bool {
        self.active.iter().any(|(_, alarm)| *alarm == AlarmType::Nospace as i32)
    }

    pub fn list(&self) -> Vec<AlarmMember> {
        self.active.iter().map(|&(member_id, alarm)| AlarmMember { member_id, alarm }).collect()
    }
}

/// The `meta` key of one alarm.
pub fn key(member: u64, alarm: i32) -> Vec<u8> {
    let mut key = PREFIX.to_vec();
    key.extend_from_slice(&member.to_be_bytes());
    key.extend_from_slice(&alarm.to_be_bytes());
    key
}

fn decode(key: &[u8]) -> Result<(u64, i32), StoreError> {
    let rest = &key[PREFIX.len().min(key.len())..];
    let bad = || StoreError::Corrupt(format!("alarm key {key:?}"));
    let member = rest.get(..8).and_then(|b| b.try_into().ok()).map(u64::from_be_bytes).ok_or_else(bad)?;
    let alarm = rest.get(8..12).and_then(|b| b.try_into().ok()).map(i32::from_be_bytes).ok_or_else(bad)?;
    Ok((member, alarm))
}
