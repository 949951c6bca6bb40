use ewr_model::{Contacts, Kinematics, ModelBuilder, NormalContacts};
fn main() {
    let mut contacts = Contacts::to_ground(2, vec![0, 1], vec![0.0]);
    contacts.normal = Some(NormalContacts {
        kinematics: Kinematics::Dofs {
            dofs: vec![2],
            other: None,
        },
        g0: vec![0.0],
        mu: vec![0.4],
        k_n: std::env::var("KN").ok().map(|k| vec![k.parse().unwrap()]),
    });
    // normal DOF coupled to u1 so that the normal load varies, and lifts off at large motion
    let m = ModelBuilder::new(3)
        .dof_labels(["u1", "u2", "z"])
        .mass(0, 1.0)
        .mass(1, 1.0)
        .mass(2, 1.0)
        .spring_to_ground(0, 1.0)
        .spring_to_ground(1, 2.0)
        .spring_to_ground(2, 3.0)
        .spring(0, 2, 0.5)
        .damper_to_ground(0, 0.01)
        .damper_to_ground(1, 0.01)
        .damper_to_ground(2, 0.01)
        .contacts(contacts)
        .force(0, 1, 10.0, 0.0)
        .force(1, 1, 10.0, 0.0)
        .force(2, 0, -20.0, 0.0)
        .build()
        .unwrap();
    ewr_model::write(
        std::path::Path::new(&std::env::var("OUT").unwrap_or("/tmp/p3.h5".into())),
        &m,
    )
    .unwrap();
}
